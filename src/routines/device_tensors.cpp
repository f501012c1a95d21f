#include "routines/device_tensors.hpp"

#include "kernels/common/tensor_fill.hpp"

namespace kbench {

int current_device_sm_count() {
  int device = 0;
  int sms = 0;
  KBENCH_CUDA_CHECK(cudaGetDevice(&device));
  KBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

std::vector<float> to_host_floats(const void* data, DType dtype, std::size_t count, float* scratch,
                                  cudaStream_t stream) {
  KBENCH_CUDA_CHECK(kernels::convert_to_float(data, dtype, static_cast<int64_t>(count), scratch, stream));
  std::vector<float> host(count);
  KBENCH_CUDA_CHECK(cudaMemcpyAsync(host.data(), scratch, count * sizeof(float), cudaMemcpyDeviceToHost, stream));
  KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  return host;
}

}  // namespace kbench
