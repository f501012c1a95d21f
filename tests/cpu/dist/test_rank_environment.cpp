// Which rank a process is, from each launcher's variables: kbench's, OpenMPI's, MPICH's, PMIx's and
// Slurm's, their precedence, and the errors that name a malformed variable.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "dist/rank_environment.hpp"
#include "dist/rendezvous.hpp"

namespace kbench::dist {
namespace {

using Variables = std::map<std::string, std::string>;

Getenv environment(const Variables& variables) {
  return [variables](const char* name) -> std::optional<std::string> {
    const auto found = variables.find(name);
    return found != variables.end() ? std::optional(found->second) : std::nullopt;
  };
}

RankEnvironment discover(const Variables& variables) { return discover_ranks(environment(variables)); }

// The message discover_ranks throws for `variables`.
std::string error_of(const Variables& variables) {
  try {
    (void)discover(variables);
  } catch (const std::runtime_error& error) {
    return error.what();
  }
  return "(no error)";
}

const Variables kKbench = {{"KBENCH_RANK", "1"},
                           {"KBENCH_WORLD_SIZE", "4"},
                           {"KBENCH_LOCAL_RANK", "1"},
                           {"KBENCH_LOCAL_SIZE", "4"},
                           {"KBENCH_MASTER_PORT", "29501"}};
const Variables kOpenMpi = {{"OMPI_COMM_WORLD_RANK", "5"},
                            {"OMPI_COMM_WORLD_SIZE", "8"},
                            {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                            {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                            {"OMPI_MCA_orte_hnp_uri", "1234.0;tcp://10.0.0.1:4000"}};
const Variables kMpich = {{"PMI_RANK", "2"},
                          {"PMI_SIZE", "3"},
                          {"MPI_LOCALRANKID", "2"},
                          {"MPI_LOCALNRANKS", "3"},
                          {"PMI_KVSNAME", "kvs_4242_0"}};
const Variables kSlurm = {{"SLURM_PROCID", "6"},  {"SLURM_NTASKS", "7"},    {"SLURM_LOCALID", "2"},
                          {"SLURM_NODEID", "1"},  {"SLURM_TASKS_PER_NODE", "4,3"},
                          {"SLURM_JOB_ID", "991"}, {"SLURM_STEP_ID", "3"}};

TEST(DiscoverRanks, NoLauncherIsASingleProcess) {
  const RankEnvironment env = discover({{"PATH", "/usr/bin"}});
  EXPECT_EQ(env.rank, 0);
  EXPECT_EQ(env.size, 1);
  EXPECT_EQ(env.local_rank, 0);
  EXPECT_EQ(env.local_size, 1);
  EXPECT_EQ(env.launcher, "");
  EXPECT_EQ(env.job_key, "");
}

TEST(DiscoverRanks, Kbench) {
  const RankEnvironment env = discover(kKbench);
  EXPECT_EQ(env.launcher, "kbench");
  EXPECT_EQ(env.rank, 1);
  EXPECT_EQ(env.size, 4);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.local_size, 4);
  EXPECT_EQ(env.job_key, "kbench:29501");
}

TEST(DiscoverRanks, OpenMpi) {
  const RankEnvironment env = discover(kOpenMpi);
  EXPECT_EQ(env.launcher, "OpenMPI");
  EXPECT_EQ(env.rank, 5);
  EXPECT_EQ(env.size, 8);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.local_size, 4);
  EXPECT_EQ(env.job_key, "OpenMPI:1234.0;tcp://10.0.0.1:4000");
}

TEST(DiscoverRanks, Mpich) {
  const RankEnvironment env = discover(kMpich);
  EXPECT_EQ(env.launcher, "MPICH");
  EXPECT_EQ(env.rank, 2);
  EXPECT_EQ(env.size, 3);
  EXPECT_EQ(env.local_rank, 2);
  EXPECT_EQ(env.local_size, 3);
  EXPECT_EQ(env.job_key, "MPICH:kvs_4242_0");
}

TEST(DiscoverRanks, PmixRankWithOpenMpisSizes) {
  const RankEnvironment env = discover({{"PMIX_RANK", "3"},
                                        {"PMIX_NAMESPACE", "prterun-host-77@1"},
                                        {"OMPI_COMM_WORLD_SIZE", "4"},
                                        {"OMPI_COMM_WORLD_LOCAL_RANK", "3"},
                                        {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}});
  EXPECT_EQ(env.launcher, "OpenMPI");
  EXPECT_EQ(env.rank, 3);
  EXPECT_EQ(env.size, 4);
  EXPECT_EQ(env.job_key, "OpenMPI:prterun-host-77@1");
}

TEST(DiscoverRanks, SlurmTakesThisNodesTasks) {
  const RankEnvironment env = discover(kSlurm);
  EXPECT_EQ(env.launcher, "Slurm");
  EXPECT_EQ(env.rank, 6);
  EXPECT_EQ(env.size, 7);
  EXPECT_EQ(env.local_rank, 2);
  EXPECT_EQ(env.local_size, 3);  // node 1 of "4,3"
  EXPECT_EQ(env.job_key, "Slurm:991/3");

  Variables repeated = kSlurm;
  repeated["SLURM_TASKS_PER_NODE"] = "2(x3),1";
  repeated["SLURM_NODEID"] = "2";
  repeated["SLURM_PROCID"] = "5";
  repeated["SLURM_LOCALID"] = "1";
  EXPECT_EQ(discover(repeated).local_size, 2);

  Variables per_node = kSlurm;
  per_node["SLURM_NTASKS_PER_NODE"] = "4";
  EXPECT_EQ(discover(per_node).local_size, 4);
}

TEST(DiscoverRanks, PmixAloneLeavesItToSlurm) {
  Variables variables = kSlurm;
  variables["PMIX_RANK"] = "6";  // srun --mpi=pmix sets it, without OpenMPI's variables
  EXPECT_EQ(discover(variables).launcher, "Slurm");
}

TEST(DiscoverRanks, PrecedenceKbenchThenMpiThenSlurm) {
  Variables all = kKbench;
  all.insert(kOpenMpi.begin(), kOpenMpi.end());
  all.insert(kMpich.begin(), kMpich.end());
  all.insert(kSlurm.begin(), kSlurm.end());
  EXPECT_EQ(discover(all).launcher, "kbench");
  for (const auto& [name, value] : kKbench) all.erase(name);
  EXPECT_EQ(discover(all).launcher, "OpenMPI");
  for (const auto& [name, value] : kOpenMpi) all.erase(name);
  EXPECT_EQ(discover(all).launcher, "MPICH");  // mpiexec inside a Slurm allocation
  for (const auto& [name, value] : kMpich) all.erase(name);
  EXPECT_EQ(discover(all).launcher, "Slurm");
}

TEST(DiscoverRanks, MalformedValuesNameTheVariable) {
  Variables variables = kKbench;
  variables["KBENCH_RANK"] = "one";
  EXPECT_EQ(error_of(variables), "KBENCH_RANK='one' is not a number");
  variables["KBENCH_RANK"] = "1x";
  EXPECT_EQ(error_of(variables), "KBENCH_RANK='1x' is not a number");
  variables["KBENCH_RANK"] = "";
  EXPECT_EQ(error_of(variables), "KBENCH_RANK='' is not a number");
  variables["KBENCH_RANK"] = "-1";
  EXPECT_EQ(error_of(variables), "KBENCH_RANK=-1 is negative");
  variables["KBENCH_RANK"] = "4";
  EXPECT_EQ(error_of(variables), "KBENCH_RANK=4 is not below KBENCH_WORLD_SIZE=4");
  variables["KBENCH_RANK"] = "0";
  variables["KBENCH_WORLD_SIZE"] = "0";
  EXPECT_EQ(error_of(variables), "KBENCH_WORLD_SIZE=0 is not a world size (at least 1)");

  Variables local = kOpenMpi;
  local["OMPI_COMM_WORLD_LOCAL_RANK"] = "4";
  EXPECT_EQ(error_of(local), "OMPI_COMM_WORLD_LOCAL_RANK=4 is not below OMPI_COMM_WORLD_LOCAL_SIZE=4");
  local["OMPI_COMM_WORLD_LOCAL_RANK"] = "0";
  local["OMPI_COMM_WORLD_LOCAL_SIZE"] = "9";
  EXPECT_EQ(error_of(local), "OMPI_COMM_WORLD_LOCAL_SIZE=9 exceeds OMPI_COMM_WORLD_SIZE=8");

  Variables missing = kMpich;
  missing.erase("MPI_LOCALRANKID");
  EXPECT_EQ(error_of(missing), "PMI_RANK is set but MPI_LOCALRANKID is not");

  Variables slurm = kSlurm;
  slurm["SLURM_TASKS_PER_NODE"] = "4,x";
  EXPECT_EQ(error_of(slurm), "SLURM_TASKS_PER_NODE='4,x' is not a list like 4(x2),3");
  slurm["SLURM_TASKS_PER_NODE"] = "4";
  EXPECT_EQ(error_of(slurm), "SLURM_NODEID=1 is past the nodes of SLURM_TASKS_PER_NODE='4'");
  slurm.erase("SLURM_TASKS_PER_NODE");
  EXPECT_EQ(error_of(slurm), "SLURM_PROCID is set but neither SLURM_NTASKS_PER_NODE nor SLURM_TASKS_PER_NODE is");
}

TEST(RendezvousOptions, DefaultsAndVariables) {
  const RankEnvironment env = discover(kOpenMpi);
  const RendezvousOptions defaults = rendezvous_options(env, environment({}));
  EXPECT_EQ(defaults.host, "127.0.0.1");
  EXPECT_EQ(defaults.timeout_s, 120.0);
  EXPECT_GE(defaults.port, 20000);
  EXPECT_LT(defaults.port, 60000);
  EXPECT_EQ(rendezvous_options(env, environment({})).port, defaults.port) << "every rank derives the same port";
  RankEnvironment other_job = env;
  other_job.job_key = "OpenMPI:another";
  EXPECT_NE(rendezvous_options(other_job, environment({})).port, defaults.port);

  const RendezvousOptions torch_style =
      rendezvous_options(env, environment({{"MASTER_ADDR", "node7"}, {"MASTER_PORT", "29500"}}));
  EXPECT_EQ(torch_style.host, "node7");
  EXPECT_EQ(torch_style.port, 29500);

  const RendezvousOptions kbench_first = rendezvous_options(
      env, environment({{"MASTER_ADDR", "node7"}, {"MASTER_PORT", "29500"}, {"KBENCH_MASTER_ADDR", "10.1.1.1"},
                        {"KBENCH_MASTER_PORT", "31000"}, {"KBENCH_DIST_TIMEOUT", "2.5"}}));
  EXPECT_EQ(kbench_first.host, "10.1.1.1");
  EXPECT_EQ(kbench_first.port, 31000);
  EXPECT_EQ(kbench_first.timeout_s, 2.5);
}

TEST(RendezvousOptions, MalformedValuesNameTheVariable) {
  const RankEnvironment env;
  const auto error_of_options = [&env](const Variables& variables) -> std::string {
    try {
      (void)rendezvous_options(env, environment(variables));
    } catch (const std::runtime_error& error) {
      return error.what();
    }
    return "(no error)";
  };
  EXPECT_EQ(error_of_options({{"MASTER_PORT", "http"}}), "MASTER_PORT='http' is not a number");
  EXPECT_EQ(error_of_options({{"KBENCH_MASTER_PORT", "70000"}}), "KBENCH_MASTER_PORT=70000 is not a TCP port");
  EXPECT_EQ(error_of_options({{"KBENCH_DIST_TIMEOUT", "0"}}),
            "KBENCH_DIST_TIMEOUT=0 is not a positive number of seconds");
  EXPECT_EQ(error_of_options({{"KBENCH_DIST_TIMEOUT", "soon"}}), "KBENCH_DIST_TIMEOUT='soon' is not a number");
}

TEST(CommandDigest, SameTokensSameDigest) {
  const std::vector<std::string> command = {"--routine", "moe_a2a", "--tokens", "128"};
  EXPECT_EQ(command_digest(command), command_digest(std::vector<std::string>(command)));
  EXPECT_EQ(command_digest(command).size(), 16u);
  const std::vector<std::string> other = {"--routine", "moe_a2a", "--tokens", "256"};
  EXPECT_NE(command_digest(command), command_digest(other));
  EXPECT_NE(command_digest(std::vector<std::string>{"a b"}), command_digest(std::vector<std::string>{"a", "b"}));
  EXPECT_NE(command_digest(std::vector<std::string>{"ab", ""}), command_digest(std::vector<std::string>{"a", "b"}));
}

}  // namespace
}  // namespace kbench::dist
