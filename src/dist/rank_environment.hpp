// Which process of a multi-GPU run this is (one process per GPU), read from the launcher's
// environment: kbench's own `--nproc N`, OpenMPI's mpirun, MPICH's mpiexec (hydra, PMI), PMIx, or
// Slurm's srun. No MPI library is linked: every launcher states the rank in its environment.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace kbench::dist {

struct RankEnvironment {
  int rank = 0;
  int size = 1;
  int local_rank = 0;  // among the ranks on this host: selects the GPU
  int local_size = 1;
  std::string launcher;  // "kbench", "OpenMPI", "MPICH", "Slurm"; empty for a single process
  std::string job_key;   // identical on every rank of one job, different between jobs (may be empty)
};

// A variable's value, or nothing when it is unset; tests pass their own.
using Getenv = std::function<std::optional<std::string>(const char*)>;

// The process environment (std::getenv).
[[nodiscard]] std::optional<std::string> process_getenv(const char* name);

// The first launcher found, in this order: kbench (KBENCH_RANK, KBENCH_WORLD_SIZE, KBENCH_LOCAL_RANK,
// KBENCH_LOCAL_SIZE), OpenMPI (OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE), MPICH
// (PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS), PMIx (PMIX_RANK with OpenMPI's size and
// local variables), Slurm (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, and SLURM_NTASKS_PER_NODE or
// this node's entry of SLURM_TASKS_PER_NODE). MPI launchers come before Slurm because mpirun inside
// a Slurm allocation leaves the allocation's SLURM_* variables in every rank's environment. With
// none of them: a single process. Throws std::runtime_error naming the variable when a value is not
// a number, is negative, or contradicts another (a rank not below the size, a missing partner).
[[nodiscard]] RankEnvironment discover_ranks(const Getenv& getenv);

}  // namespace kbench::dist
