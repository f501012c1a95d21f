#include "dist/rank_environment.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

namespace kbench::dist {
namespace {

struct LauncherVariables {
  const char* launcher;
  const char* rank;
  const char* size;
  const char* local_rank;
  const char* local_size;  // nullptr: Slurm's, found by slurm_local_size
  // PMIX_RANK alone is also set by srun --mpi=pmix, where Slurm's variables say the rest.
  bool recognised_by_rank_and_size;
  // Joined, those set make the job key: each is the same on every rank of a job.
  std::array<const char*, 3> job_variables;
};

constexpr std::array<LauncherVariables, 5> kLaunchers = {{
    {"kbench", "KBENCH_RANK", "KBENCH_WORLD_SIZE", "KBENCH_LOCAL_RANK", "KBENCH_LOCAL_SIZE", false,
     {"KBENCH_MASTER_PORT", nullptr, nullptr}},
    {"OpenMPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE", false, {"PMIX_NAMESPACE", "OMPI_MCA_orte_hnp_uri", "OMPI_MCA_ess_base_jobid"}},
    {"MPICH", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", false,
     {"PMI_KVSNAME", "PMI_PORT", nullptr}},
    {"OpenMPI", "PMIX_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE",
     true, {"PMIX_NAMESPACE", "OMPI_MCA_orte_hnp_uri", "OMPI_MCA_ess_base_jobid"}},
    {"Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", nullptr, false,
     {"SLURM_JOB_ID", "SLURM_STEP_ID", nullptr}},
}};

[[noreturn]] void fail(const std::string& message) { throw std::runtime_error(message); }

// The whole of `text` as an int, or nothing ("", "4x", "+4", out of range).
std::optional<int> whole_number(std::string_view text) {
  int value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end) return std::nullopt;
  return value;
}

int parse_number(const char* name, const std::string& text) {
  const auto value = whole_number(text);
  if (!value) fail(std::string(name) + "='" + text + "' is not a number");
  if (*value < 0) fail(std::string(name) + "=" + text + " is negative");
  return *value;
}

int required_number(const Getenv& getenv, const char* name, const char* recognised_by) {
  const auto text = getenv(name);
  if (!text) fail(std::string(recognised_by) + " is set but " + name + " is not");
  return parse_number(name, *text);
}

// SLURM_TASKS_PER_NODE lists the tasks of each node in node order, runs compressed: "4(x2),3".
int slurm_local_size(const Getenv& getenv) {
  if (const auto per_node = getenv("SLURM_NTASKS_PER_NODE")) return parse_number("SLURM_NTASKS_PER_NODE", *per_node);
  const auto layout = getenv("SLURM_TASKS_PER_NODE");
  if (!layout) fail("SLURM_PROCID is set but neither SLURM_NTASKS_PER_NODE nor SLURM_TASKS_PER_NODE is");
  const auto node_text = getenv("SLURM_NODEID");
  const int node = node_text ? parse_number("SLURM_NODEID", *node_text) : 0;
  const auto malformed = [&] { fail("SLURM_TASKS_PER_NODE='" + *layout + "' is not a list like 4(x2),3"); };
  int first_node_of_entry = 0;
  std::string_view rest = *layout;
  while (!rest.empty()) {
    const std::string_view entry = rest.substr(0, rest.find(','));
    rest.remove_prefix(std::min(rest.size(), entry.size() + 1));
    const std::size_t paren = entry.find('(');
    const auto tasks = whole_number(entry.substr(0, paren));
    std::optional<int> repeats = 1;
    if (paren != std::string_view::npos) {
      const std::string_view repeat = entry.substr(paren);  // "(x2)"
      if (repeat.size() < 4 || !repeat.starts_with("(x") || !repeat.ends_with(')')) malformed();
      repeats = whole_number(repeat.substr(2, repeat.size() - 3));
    }
    if (!tasks || *tasks < 0 || !repeats || *repeats < 1) malformed();
    if (node < first_node_of_entry + *repeats) return *tasks;
    first_node_of_entry += *repeats;
  }
  fail("SLURM_NODEID=" + std::to_string(node) + " is past the nodes of SLURM_TASKS_PER_NODE='" + *layout + "'");
}

std::string job_key(const Getenv& getenv, const LauncherVariables& variables) {
  std::string key;
  for (const char* name : variables.job_variables) {
    if (name == nullptr) continue;
    if (const auto value = getenv(name)) key += (key.empty() ? "" : "/") + *value;
  }
  return key.empty() ? key : std::string(variables.launcher) + ":" + key;
}

}  // namespace

std::optional<std::string> process_getenv(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
}

RankEnvironment discover_ranks(const Getenv& getenv) {
  for (const auto& variables : kLaunchers) {
    const auto rank_text = getenv(variables.rank);
    if (!rank_text || (variables.recognised_by_rank_and_size && !getenv(variables.size))) continue;
    RankEnvironment env;
    env.launcher = variables.launcher;
    env.rank = parse_number(variables.rank, *rank_text);
    env.size = required_number(getenv, variables.size, variables.rank);
    env.local_rank = required_number(getenv, variables.local_rank, variables.rank);
    env.local_size = variables.local_size != nullptr ? required_number(getenv, variables.local_size, variables.rank)
                                                     : slurm_local_size(getenv);
    const auto named = [](const char* name, int value) { return std::string(name) + "=" + std::to_string(value); };
    const std::string local_size_name =
        variables.local_size != nullptr ? variables.local_size : "the Slurm tasks per node";
    if (env.size < 1) fail(named(variables.size, env.size) + " is not a world size (at least 1)");
    if (env.rank >= env.size) {
      fail(named(variables.rank, env.rank) + " is not below " + named(variables.size, env.size));
    }
    if (env.local_rank >= env.local_size) {
      fail(named(variables.local_rank, env.local_rank) + " is not below " + local_size_name + "=" +
           std::to_string(env.local_size));
    }
    if (env.local_size > env.size) {
      fail(local_size_name + "=" + std::to_string(env.local_size) + " exceeds " + named(variables.size, env.size));
    }
    env.job_key = job_key(getenv, variables);
    return env;
  }
  return {};
}

}  // namespace kbench::dist
