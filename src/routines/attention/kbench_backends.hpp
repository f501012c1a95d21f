// The attention family's own backends, on kbench's kernels (kernels/attention): decode fa2
// (CUDA cores) and fa2_tc (tensor cores), prefill fa2 (mma.sync), fa3 (Hopper: TMA + wgmma) and
// fa2_tc (the decode kernel, for one query token per request), MLA
// decode fa2 (mma.sync) and fa3 (Hopper: wgmma).
#pragma once

#include <memory>

#include "core/backend.hpp"
#include "kernels/attention/decode/decode.hpp"
#include "kernels/attention/mla/mla.hpp"
#include "kernels/attention/prefill/prefill.hpp"

namespace kbench {

[[nodiscard]] std::unique_ptr<Backend> make_decode_kernel_backend(kernels::DecodeKernel kernel);
[[nodiscard]] std::unique_ptr<Backend> make_prefill_kernel_backend(kernels::PrefillKernel kernel);
// fa2_tc for prefill cases of one query token per request: the decode kernel.
[[nodiscard]] std::unique_ptr<Backend> make_prefill_on_decode_backend();
[[nodiscard]] std::unique_ptr<Backend> make_mla_kernel_backend(kernels::MlaKernel kernel);

}  // namespace kbench
