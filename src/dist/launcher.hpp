// kbench's own launcher, `kbench --nproc N ...` on one host: what mpirun would do, without MPI.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace kbench::dist {

// Starts `nproc` copies of `program` with `arguments` (the caller has removed --nproc), rank r with
// KBENCH_RANK=r, KBENCH_WORLD_SIZE=KBENCH_LOCAL_SIZE=nproc, KBENCH_LOCAL_RANK=r,
// KBENCH_MASTER_ADDR=127.0.0.1, KBENCH_MASTER_PORT=<a free port> and NCCL_NVLS_ENABLE=0 (unless set).
// Every child sees every GPU (CUDA IPC between processes needs them) and picks its own by local
// rank; whether there are enough GPUs is the children's check. Their output goes to ours. When one
// fails, "[ERROR] rank R: <exit status or signal>: stopping the other ranks" goes to `err` and the
// others get KBENCH_DIST_TIMEOUT seconds (30 when unset) to end before they are killed. Returns 0
// when every rank exited 0, else the first failure's exit status (1 for a signal), 2 for a bad
// nproc or KBENCH_DIST_TIMEOUT.
[[nodiscard]] int launch_local(int nproc, const std::string& program, const std::vector<std::string>& arguments,
                               std::ostream& err);

}  // namespace kbench::dist
