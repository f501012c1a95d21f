#include "core/host_tensor.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "kbench/cuda_check.hpp"

namespace kbench {
namespace {

template <class Stored, class Convert>
void widen(const std::vector<uint8_t>& raw, std::vector<float>& out, Convert convert) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    Stored value;
    std::memcpy(&value, raw.data() + i * sizeof(Stored), sizeof(Stored));
    out[i] = convert(value);
  }
}

}  // namespace

std::vector<uint8_t> read_bytes(const void* data, std::size_t bytes, cudaStream_t stream) {
  std::vector<uint8_t> raw(bytes);
  if (bytes > 0) KBENCH_CUDA_CHECK(cudaMemcpyAsync(raw.data(), data, bytes, cudaMemcpyDeviceToHost, stream));
  KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  return raw;
}

std::vector<float> read_as_floats(const void* data, DType dtype, std::size_t count, cudaStream_t stream) {
  const std::vector<uint8_t> raw = read_bytes(data, count * dtype_size(dtype), stream);
  std::vector<float> out(count);
  switch (dtype) {
    case DType::float32: std::memcpy(out.data(), raw.data(), raw.size()); break;
    case DType::bfloat16: widen<__nv_bfloat16>(raw, out, [](__nv_bfloat16 v) { return __bfloat162float(v); }); break;
    case DType::float16: widen<__half>(raw, out, [](__half v) { return __half2float(v); }); break;
    case DType::fp8_e4m3: widen<__nv_fp8_e4m3>(raw, out, [](__nv_fp8_e4m3 v) { return static_cast<float>(v); }); break;
    case DType::fp8_e5m2: widen<__nv_fp8_e5m2>(raw, out, [](__nv_fp8_e5m2 v) { return static_cast<float>(v); }); break;
    case DType::int32: widen<int32_t>(raw, out, [](int32_t v) { return static_cast<float>(v); }); break;
    case DType::int64: widen<int64_t>(raw, out, [](int64_t v) { return static_cast<float>(v); }); break;
    case DType::uint8: widen<uint8_t>(raw, out, [](uint8_t v) { return static_cast<float>(v); }); break;
  }
  return out;
}

}  // namespace kbench
