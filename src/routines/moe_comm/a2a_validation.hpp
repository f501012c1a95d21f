// --validate, as the reference runs it before timing: dispatch, a fake expert stage, combine,
// checked on every rank; rank 0 prints the verdict and a failure stops the case.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <string_view>

namespace kbench {

class MoeA2aCase;

// Throws CaseError ("[VALIDATE] FAILED ...") where any rank's output is off.
void run_validation(MoeA2aCase& c, std::string_view backend, const std::function<void(cudaStream_t)>& dispatch,
                    const std::function<void(cudaStream_t)>& combine, cudaStream_t stream);

}  // namespace kbench
