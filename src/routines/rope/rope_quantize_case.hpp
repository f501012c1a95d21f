// One FP8 RoPE problem (rope_quantize_fp8, mla_rope_quantize_fp8,
// rope_quantize_fp8_append_paged_kv_cache): its tensors on the device, the formulas (rope_bytes),
// the host reference, the call.
//
// Inputs as the reference builds them (shared/spec/rope.md): q_rope (T, Hq, r), k_rope (T, Hk, r)
// (MLA: (T, r), one latent head), q_nope / k_nope (T, H, nd) where nd > 0, v (T, Hk, D) for the
// paged append, the fp32 cos/sin cache (seq_len, r) and int32 pos_ids (index in the request). kbench
// fills the cache with the real cos/sin table of --rope_theta / --rope_scale (the reference fills
// MLA's with random normals: the same bytes, the same time). Paged append: each request owns
// ceil(seq_len / page_size) contiguous pages (kv_indices = arange), caches fp8 in NHD or HND.
#pragma once

#include <cstdint>
#include <vector>

#include "core/routine.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/rope/rope.hpp"
#include "routines/rope/rope_case.hpp"
#include "routines/rope/rope_reference.hpp"

namespace kbench {

class RopeQuantizeCase final : public Case {
 public:
  explicit RopeQuantizeCase(RopeProblem problem) : p_(std::move(problem)) {}

  [[nodiscard]] double flops() const override { return 0.0; }
  [[nodiscard]] double bytes() const override { return rope_bytes(p_); }
  [[nodiscard]] std::size_t bytes_per_copy() const override;
  [[nodiscard]] std::size_t reference_bytes() const override { return 0; }  // the reference runs on the host
  [[nodiscard]] std::vector<TensorInfo> tensors() const override;
  void describe(const Log& log) const override;
  void allocate(int copies, uint64_t seed, cudaStream_t stream) override;
  [[nodiscard]] std::vector<CheckedOutput> outputs() const override;
  [[nodiscard]] std::vector<std::vector<float>> reference(cudaStream_t stream) override;
  // The paged caches: the slots of appended tokens against the reference, every other element must
  // keep the poison the refcheck wrote (reference() gives NaN there).
  [[nodiscard]] std::vector<Comparison> compare(const std::vector<CheckedOutput>& outputs,
                                                const std::vector<std::vector<float>>& expected,
                                                const std::vector<std::vector<float>>& got) const override;

  [[nodiscard]] const RopeProblem& problem() const noexcept { return p_; }
  [[nodiscard]] bool paged() const { return p_.variant == RopeVariant::rope_quantize_fp8_append_paged_kv_cache; }
  [[nodiscard]] rope_reference::PagedCache cache_shape() const;
  // The kernel's sizes and options (no pointers: there may be no input set yet).
  [[nodiscard]] kernels::RopeQuantizeParams shape() const;
  // Input set `copy` as kbench's kernel takes it.
  [[nodiscard]] kernels::RopeQuantizeParams params(int copy) const;

 private:
  struct Copy {
    DeviceBuffer q_rope, k_rope, q_nope, k_nope, v;
    DeviceBuffer q_rope_out, k_rope_out, q_nope_out, k_nope_out;
    DeviceBuffer k_cache, v_cache;
    DeviceBuffer cos_sin_cache, pos_ids;
    DeviceBuffer kv_indices, kv_indptr, batch_indices, positions;
  };
  // Elements of each tensor.
  [[nodiscard]] std::size_t rope_elements(int heads) const;
  [[nodiscard]] std::size_t nope_elements(int heads) const;
  [[nodiscard]] std::size_t v_elements() const;

  RopeProblem p_;
  std::vector<Copy> copies_;
};

}  // namespace kbench
