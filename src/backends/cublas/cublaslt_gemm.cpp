#include "backends/cublas/cublaslt_gemm.hpp"

#include <cublasLt.h>
#include <cublas_api.h>

#include <stdexcept>
#include <utility>

#include "kbench/cuda_check.hpp"
#include "kbench/device_buffer.hpp"

namespace kbench::backends {
namespace {

// The heuristic may pick split-k algorithms up to this much workspace; the object allocates what
// the chosen one needs.
constexpr std::size_t kMaxWorkspaceBytes = std::size_t{32} << 20;
constexpr int64_t kScaleBlock = 128;
// VEC128_32F / BLK128x128_32F arrived in cuBLAS 12.9 (major * 10000 + minor * 100 + patch).
constexpr int64_t kBlockScalingVersion = 120900;

void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(what) + ": " + cublasLtGetStatusName(status) + " (" +
                             cublasLtGetStatusString(status) + ")");
  }
}

cudaDataType_t data_type(DType dtype) {
  switch (dtype) {
    case DType::bfloat16: return CUDA_R_16BF;
    case DType::float16: return CUDA_R_16F;
    case DType::float32: return CUDA_R_32F;
    case DType::fp8_e4m3: return CUDA_R_8F_E4M3;
    case DType::fp8_e5m2: return CUDA_R_8F_E5M2;
    default: throw std::invalid_argument("cuBLASLt GEMM: no cuBLAS type for " + std::string(dtype_name(dtype)));
  }
}

int64_t round_up(int64_t x, int64_t multiple) { return (x + multiple - 1) / multiple * multiple; }

template <class Value>
void set(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, const Value& value) {
  check(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof(value)), "cublasLtMatmulDescSetAttribute");
}

// A column-major rows x cols matrix of `dtype` with leading dimension ld, `batch` of them
// batch_stride elements apart.
cublasLtMatrixLayout_t make_layout(DType dtype, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                                   int64_t batch_stride) {
  cublasLtMatrixLayout_t layout = nullptr;
  check(cublasLtMatrixLayoutCreate(&layout, data_type(dtype), static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld),
        "cublasLtMatrixLayoutCreate");
  if (batch > 1) {
    const int32_t count = static_cast<int32_t>(batch);
    check(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
          "cublasLtMatrixLayoutSetAttribute");
    check(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &batch_stride,
                                           sizeof(batch_stride)),
          "cublasLtMatrixLayoutSetAttribute");
  }
  return layout;
}

}  // namespace

int64_t a_block_scale_index(const CublasGemmShape& shape, int64_t row, int64_t k_block) {
  return k_block * shape.m + row;
}

int64_t b_block_scale_index(const CublasGemmShape& shape, int64_t n_block, int64_t k_block) {
  return n_block * round_up(shape.k / kScaleBlock, 4) + k_block;
}

int64_t a_block_scale_floats(const CublasGemmShape& shape) { return shape.k / kScaleBlock * shape.m; }

int64_t b_block_scale_floats(const CublasGemmShape& shape) {
  return shape.n / kScaleBlock * round_up(shape.k / kScaleBlock, 4);
}

int64_t cublaslt_version() { return static_cast<int64_t>(cublasLtGetVersion()); }

std::string cublaslt_version_string() {
  const auto text = [](int64_t v) {
    return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
  };
  return "cuBLASLt " + text(cublaslt_version()) + " (built against " + text(CUBLAS_VERSION) + ")";
}

std::optional<std::string> cublaslt_gemm_unsupported(const CublasGemmShape& s) {
  const bool fp8 = s.scaling != CublasScaling::none;
  if (fp8) {
    if (!is_fp8(s.a_dtype) || !is_fp8(s.b_dtype)) return "scaled GEMMs take fp8 operands";
    if (s.a_dtype == DType::fp8_e5m2 && s.b_dtype == DType::fp8_e5m2) {
      return "cuBLASLt has no FP8 GEMM with both operands fp8_e5m2";
    }
    if (s.out_dtype != DType::bfloat16 && s.out_dtype != DType::float16) return "kbench's FP8 GEMMs write bfloat16 or float16";
  } else {
    if (s.a_dtype != s.b_dtype || (s.a_dtype != DType::bfloat16 && s.a_dtype != DType::float16)) {
      return "unscaled GEMMs take two bfloat16 or two float16 operands";
    }
    if (s.out_dtype != s.a_dtype && s.out_dtype != DType::float32) {
      return "cuBLASLt's 16-bit GEMMs write their input type or float32";
    }
  }
  if (s.scaling == CublasScaling::blockwise_128) {
    if (s.a_dtype != DType::fp8_e4m3 || s.b_dtype != DType::fp8_e4m3) return "block-scaled FP8 takes fp8_e4m3 operands";
    if (s.batch != 1) return "kbench calls block-scaled FP8 on one matrix at a time";
    if (s.k % kScaleBlock != 0) return "block scaling needs k a multiple of 128";
    // A partial last 128-row block of weights (kbench's groupwise extension) is untried with cuBLASLt.
    if (s.n % kScaleBlock != 0) return "kbench's cuBLASLt block scaling needs n a multiple of 128, not " + std::to_string(s.n);
    if (cublaslt_version() < kBlockScalingVersion) return "block-scaled FP8 needs cuBLAS 12.9 or newer, loaded " + cublaslt_version_string();
  }
  // Measured on the H100 (session 13): cuBLASLt 13.0 finds no bf16 algorithm for m 33, n 70, k 41.
  if (s.k * static_cast<int64_t>(dtype_size(s.a_dtype)) % 16 != 0 || s.n * static_cast<int64_t>(dtype_size(s.out_dtype)) % 16 != 0) {
    return "kbench plans cuBLASLt GEMMs on 16-byte aligned rows only (k and n times their element sizes multiples of 16)";
  }
  if (s.bias && (s.scaling != CublasScaling::none || s.out_dtype != DType::bfloat16)) {
    return "kbench adds the bias in cuBLASLt's epilogue only for bfloat16 GEMMs with a bfloat16 output";
  }
  return std::nullopt;
}

struct CublasLtGemm::Impl {
  CublasGemmShape shape;
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a_layout = nullptr;  // cuBLAS's A: our B
  cublasLtMatrixLayout_t b_layout = nullptr;  // cuBLAS's B: our A
  cublasLtMatrixLayout_t d_layout = nullptr;
  cublasLtMatmulAlgo_t algo{};
  DeviceBuffer workspace;

  ~Impl() {
    // Destroy calls on valid objects only fail on a broken context; a destructor must not throw.
    if (d_layout != nullptr) (void)cublasLtMatrixLayoutDestroy(d_layout);
    if (b_layout != nullptr) (void)cublasLtMatrixLayoutDestroy(b_layout);
    if (a_layout != nullptr) (void)cublasLtMatrixLayoutDestroy(a_layout);
    if (desc != nullptr) (void)cublasLtMatmulDescDestroy(desc);
    if (handle != nullptr) (void)cublasLtDestroy(handle);
  }
};

CublasLtGemm::CublasLtGemm(const CublasGemmShape& shape) : impl_(std::make_unique<Impl>()) {
  if (const auto reason = cublaslt_gemm_unsupported(shape)) throw std::runtime_error(*reason);
  Impl& p = *impl_;
  p.shape = shape;
  check(cublasLtCreate(&p.handle), "cublasLtCreate");
  check(cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  set(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T);
  set(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
  if (shape.scaling == CublasScaling::blockwise_128) {
    set(p.desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, static_cast<int32_t>(CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F));
    set(p.desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, static_cast<int32_t>(CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F));
  }
  if (shape.bias) set(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS);
  // D^T (n x m, column-major) = B (k x n stored, transposed) times A^T (k x m stored).
  p.a_layout = make_layout(shape.b_dtype, shape.k, shape.n, shape.k, shape.batch, shape.n * shape.k);
  p.b_layout = make_layout(shape.a_dtype, shape.k, shape.m, shape.k, shape.batch, shape.m * shape.k);
  p.d_layout = make_layout(shape.out_dtype, shape.n, shape.m, shape.n, shape.batch, shape.m * shape.n);

  cublasLtMatmulPreference_t preference = nullptr;
  check(cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate");
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status = [&] {
    const cublasStatus_t s = cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                                  &kMaxWorkspaceBytes, sizeof(kMaxWorkspaceBytes));
    if (s != CUBLAS_STATUS_SUCCESS) return s;
    return cublasLtMatmulAlgoGetHeuristic(p.handle, p.desc, p.a_layout, p.b_layout, p.d_layout, p.d_layout, preference, 1,
                                          &result, &found);
  }();
  (void)cublasLtMatmulPreferenceDestroy(preference);
  check(status, "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0) {
    throw std::runtime_error("cuBLASLt found no algorithm for this GEMM (" + std::string(dtype_name(shape.a_dtype)) + " x " +
                             std::string(dtype_name(shape.b_dtype)) + " -> " + std::string(dtype_name(shape.out_dtype)) + ", m " +
                             std::to_string(shape.m) + ", n " + std::to_string(shape.n) + ", k " + std::to_string(shape.k) +
                             "; FP8 wants k and n multiples of 16)");
  }
  p.algo = result.algo;
  p.workspace = DeviceBuffer(result.workspaceSize);
}

CublasLtGemm::~CublasLtGemm() = default;
CublasLtGemm::CublasLtGemm(CublasLtGemm&&) noexcept = default;
CublasLtGemm& CublasLtGemm::operator=(CublasLtGemm&&) noexcept = default;

void CublasLtGemm::run(const CublasGemmOperands& o, cudaStream_t stream) {
  Impl& p = *impl_;
  // cuBLAS's A is our B, so the scales swap sides too.
  if (p.shape.scaling != CublasScaling::none) {
    set(p.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, o.b_scale);
    set(p.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, o.a_scale);
  }
  if (p.shape.bias) set(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, o.bias);
  const float alpha = 1.0f;
  const float beta = 0.0f;
  check(cublasLtMatmul(p.handle, p.desc, &alpha, o.b, p.a_layout, o.a, p.b_layout, &beta, o.d, p.d_layout, o.d,
                       p.d_layout, &p.algo, p.workspace.get(), p.workspace.bytes(), stream),
        "cublasLtMatmul");
}

const CublasGemmShape& CublasLtGemm::shape() const noexcept { return impl_->shape; }
std::size_t CublasLtGemm::workspace_bytes() const noexcept { return impl_->workspace.bytes(); }

}  // namespace kbench::backends
