#include "routines/gemm/block_scale_layouts.hpp"

#include "core/host_tensor.hpp"
#include "kbench/cuda_check.hpp"

namespace kbench {
namespace {

DeviceBuffer upload_floats(const std::vector<float>& host, cudaStream_t stream) {
  DeviceBuffer device(host.size() * sizeof(float));
  KBENCH_CUDA_CHECK(cudaMemcpyAsync(device.get(), host.data(), device.bytes(), cudaMemcpyHostToDevice, stream));
  KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));  // `host` goes out of scope
  return device;
}

}  // namespace

RewrittenBlockScales rewrite_block_scales(const GemmCase& problem, const BlockScaleLayout& layout, cudaStream_t stream) {
  const GemmProblem& p = problem.problem();
  const int64_t k_blocks = p.k_blocks(), n_blocks = p.n_blocks();
  // The reference's A scales are one layout over every group's rows; its B scales one per group.
  const int64_t a_rows = p.batch * p.m, b_group_floats = n_blocks * k_blocks;
  RewrittenBlockScales rewritten;
  for (int copy = 0; copy < problem.copies(); ++copy) {
    const GemmOperands o = problem.operands(copy);
    const std::vector<float> a = read_as_floats(o.a_scale, DType::float32, static_cast<std::size_t>(p.a_scale_count()), stream);
    const std::vector<float> b = read_as_floats(o.b_scale, DType::float32, static_cast<std::size_t>(p.b_scale_count()), stream);
    std::vector<float> a_library(static_cast<std::size_t>(p.batch * layout.a_floats));
    std::vector<float> b_library(static_cast<std::size_t>(p.batch * layout.b_floats), 1.0f);
    for (int64_t group = 0; group < p.batch; ++group) {
      for (int64_t kb = 0; kb < k_blocks; ++kb) {
        for (int64_t row = 0; row < p.m; ++row) {
          const int64_t reference_row = group * p.m + row;
          a_library[static_cast<std::size_t>(group * layout.a_floats + layout.a_index(row, kb))] =
              a[static_cast<std::size_t>(kernels::gemm::a_scale_offset(p.major, a_rows, k_blocks, reference_row, kb))];
        }
        for (int64_t nb = 0; nb < n_blocks; ++nb) {
          b_library[static_cast<std::size_t>(group * layout.b_floats + layout.b_index(nb, kb))] =
              b[static_cast<std::size_t>(group * b_group_floats +
                                         kernels::gemm::b_scale_offset(p.major, n_blocks, k_blocks, nb, kb))];
        }
      }
    }
    rewritten.a.push_back(upload_floats(a_library, stream));
    rewritten.b.push_back(upload_floats(b_library, stream));
  }
  return rewritten;
}

}  // namespace kbench
