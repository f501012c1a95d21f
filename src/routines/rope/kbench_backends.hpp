// The RoPE family's own backend: `cuda`, kbench's RoPE kernels (kernels/rope).
#pragma once

#include <memory>

#include "core/backend.hpp"

namespace kbench {

[[nodiscard]] std::unique_ptr<Backend> make_rope_cuda_backend();
// The FP8 routines (rope_quantize_fp8, mla_rope_quantize_fp8, rope_quantize_fp8_append_paged_kv_cache).
[[nodiscard]] std::unique_ptr<Backend> make_rope_quantize_cuda_backend();

}  // namespace kbench
