// The vendor libraries that backends stand on, as this build has them: built, or the one reason
// every backend of a missing library gives (set by src/backends/CMakeLists.txt and
// cmake/KbenchFlashinfer.cmake). vendor_backend<Concrete, Library> (core/backend.hpp) reads them.
#pragma once

#include <string_view>

namespace kbench {

struct CudnnLibrary {
  static constexpr bool built = KBENCH_HAVE_CUDNN;
  static constexpr std::string_view absent_reason = KBENCH_CUDNN_MISSING;
};

struct CublasLibrary {
  static constexpr bool built = KBENCH_HAVE_CUBLAS;
  static constexpr std::string_view absent_reason = KBENCH_CUBLAS_MISSING;
};

struct CutlassLibrary {
  static constexpr bool built = KBENCH_HAVE_CUTLASS;
  static constexpr std::string_view absent_reason = KBENCH_CUTLASS_MISSING;
};

struct FlashinferLibrary {
  static constexpr bool built = KBENCH_HAVE_FLASHINFER;
  static constexpr std::string_view absent_reason = KBENCH_FLASHINFER_MISSING;
};

struct NcclLibrary {
  static constexpr bool built = KBENCH_HAVE_NCCL;
  static constexpr std::string_view absent_reason = KBENCH_NCCL_MISSING;
};

}  // namespace kbench
