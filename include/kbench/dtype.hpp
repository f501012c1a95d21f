// Element types that cross the boundary between the harness, the routine families and the kernels.
// Plain C++: no CUDA headers, so CPU-only code can name them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kbench {

// int32 and int64 describe index tensors (page tables, top-k indices); kernels never take them as a
// data type. uint8 is raw bytes (packed FP4 pairs, block scale factors): compared exactly, byte for
// byte.
enum class DType { bfloat16, float16, float32, fp8_e4m3, fp8_e5m2, int32, int64, uint8 };

// The names used on the command line and in the CSV ("bfloat16", "fp8_e4m3", ...).
[[nodiscard]] constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::bfloat16: return "bfloat16";
    case DType::float16: return "float16";
    case DType::float32: return "float32";
    case DType::fp8_e4m3: return "fp8_e4m3";
    case DType::fp8_e5m2: return "fp8_e5m2";
    case DType::int32: return "int32";
    case DType::int64: return "int64";
    case DType::uint8: return "uint8";
  }
  return "?";
}

// The torch spelling the reference tool prints in its [VVERBOSE] lines.
[[nodiscard]] constexpr std::string_view dtype_torch_name(DType t) {
  switch (t) {
    case DType::bfloat16: return "torch.bfloat16";
    case DType::float16: return "torch.float16";
    case DType::float32: return "torch.float32";
    case DType::fp8_e4m3: return "torch.float8_e4m3fn";
    case DType::fp8_e5m2: return "torch.float8_e5m2";
    case DType::int32: return "torch.int32";
    case DType::int64: return "torch.int64";
    case DType::uint8: return "torch.uint8";
  }
  return "?";
}

[[nodiscard]] constexpr std::optional<DType> parse_dtype(std::string_view name) {
  for (DType t : {DType::bfloat16, DType::float16, DType::float32, DType::fp8_e4m3, DType::fp8_e5m2, DType::int32, DType::int64, DType::uint8}) {
    if (name == dtype_name(t)) return t;
  }
  return std::nullopt;
}

[[nodiscard]] constexpr std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::bfloat16:
    case DType::float16: return 2;
    case DType::float32:
    case DType::int32: return 4;
    case DType::int64: return 8;
    case DType::fp8_e4m3:
    case DType::fp8_e5m2:
    case DType::uint8: return 1;
  }
  return 0;
}

// Bytes of `elements` values of `t`.
[[nodiscard]] constexpr std::size_t bytes_of(std::int64_t elements, DType t) {
  return static_cast<std::size_t>(elements) * dtype_size(t);
}

[[nodiscard]] constexpr bool is_fp8(DType t) { return t == DType::fp8_e4m3 || t == DType::fp8_e5m2; }

}  // namespace kbench
