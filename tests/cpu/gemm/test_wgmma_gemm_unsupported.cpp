// What kbench's wgmma GEMM takes and refuses, without a GPU (wgmma_gemm_unsupported,
// kernels/gemm/sm90): the grouped problems of its MoE users (per-group per-tensor B scales, fp16
// operands, weight-only FP4) are taken, and each refusal names its reason.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "kernels/gemm/sm90/wgmma_gemm.hpp"

namespace {

using kbench::DType;
namespace wg = kbench::kernels::gemm::sm90;

// An MoE-like grouped problem: 8 groups whose row offsets are on the device.
wg::WgmmaGemmParams grouped(wg::GemmScaling scaling, DType operands) {
  wg::WgmmaGemmParams p;
  p.scaling = scaling;
  p.groups = 8;
  p.rows = 1000;
  p.n = 2048;
  p.k = 1024;
  p.a_dtype = p.b_dtype = operands;
  return p;
}

void expect_refused(const wg::WgmmaGemmParams& p, const std::string& reason_part) {
  const std::optional<std::string> reason = wg::wgmma_gemm_unsupported(p);
  ASSERT_TRUE(reason.has_value()) << "taken; expected a refusal naming '" << reason_part << "'";
  EXPECT_NE(reason->find(reason_part), std::string::npos) << *reason;
}

TEST(WgmmaGemmUnsupported, PerTensorTakesOneScaleForEachGroupOfB) {
  wg::WgmmaGemmParams p = grouped(wg::GemmScaling::per_tensor, DType::fp8_e4m3);
  EXPECT_EQ(wg::wgmma_gemm_unsupported(p), std::nullopt);  // one scale for all groups
  p.b_scale_group_stride = 1;
  EXPECT_EQ(wg::wgmma_gemm_unsupported(p), std::nullopt);
  for (int64_t wg::WgmmaGemmParams::*stride : {&wg::WgmmaGemmParams::a_scale_row_stride,
                                               &wg::WgmmaGemmParams::a_scale_k_stride,
                                               &wg::WgmmaGemmParams::b_scale_n_stride,
                                               &wg::WgmmaGemmParams::b_scale_k_stride}) {
    wg::WgmmaGemmParams strided = p;
    strided.*stride = 1;
    expect_refused(strided, "scale strides must be 0");
  }
}

TEST(WgmmaGemmUnsupported, UnscaledTakesBf16OrFp16OperandsAlike) {
  for (const DType operands : {DType::bfloat16, DType::float16}) {
    for (const DType d : {DType::bfloat16, DType::float16}) {
      wg::WgmmaGemmParams p = grouped(wg::GemmScaling::none, operands);
      p.d_dtype = d;
      EXPECT_EQ(wg::wgmma_gemm_unsupported(p), std::nullopt);
    }
  }
  wg::WgmmaGemmParams mixed = grouped(wg::GemmScaling::none, DType::bfloat16);
  mixed.b_dtype = DType::float16;
  expect_refused(mixed, "bfloat16 x bfloat16 and float16 x float16");
  expect_refused(grouped(wg::GemmScaling::none, DType::fp8_e4m3), "bfloat16 x bfloat16 and float16 x float16");
  wg::WgmmaGemmParams odd_k = grouped(wg::GemmScaling::none, DType::float16);
  odd_k.k = 1020;
  expect_refused(odd_k, "k a multiple of 8");
}

// weight_fp4: bf16 or fp16 A, FP4 B, any groups (device or equal); block_fp4 stays one matrix.
wg::WgmmaGemmParams weight_fp4(DType a_dtype, kbench::kernels::quant::BlockFormat format) {
  wg::WgmmaGemmParams p = grouped(wg::GemmScaling::weight_fp4, a_dtype);
  p.b_dtype = DType::uint8;
  p.fp4_format = format;
  return p;
}

TEST(WgmmaGemmUnsupported, WeightFp4TakesGroupsOfFp4BAndBf16OrFp16A) {
  using kbench::kernels::quant::BlockFormat;
  for (const DType a_dtype : {DType::bfloat16, DType::float16}) {
    wg::WgmmaGemmParams p = weight_fp4(a_dtype, BlockFormat::nvfp4);
    EXPECT_EQ(wg::wgmma_gemm_unsupported(p), std::nullopt);
    p.rows_per_group = 7;
    p.rows = 8 * 7;
    EXPECT_EQ(wg::wgmma_gemm_unsupported(p), std::nullopt);
  }
  EXPECT_EQ(wg::wgmma_gemm_unsupported(weight_fp4(DType::bfloat16, BlockFormat::mxfp4)), std::nullopt);
  expect_refused(weight_fp4(DType::float16, BlockFormat::mxfp4), "leave fp16's range");
  expect_refused(weight_fp4(DType::fp8_e4m3, BlockFormat::nvfp4), "bfloat16 or float16 A");
  wg::WgmmaGemmParams unpacked_b = weight_fp4(DType::bfloat16, BlockFormat::nvfp4);
  unpacked_b.b_dtype = DType::bfloat16;
  expect_refused(unpacked_b, "packed e2m1 pairs (uint8) for B");
  expect_refused(weight_fp4(DType::bfloat16, BlockFormat::mxfp8), "NVFP4 or MXFP4");
  wg::WgmmaGemmParams scalar_alpha = weight_fp4(DType::bfloat16, BlockFormat::nvfp4);
  scalar_alpha.alpha = 0.5f;
  expect_refused(scalar_alpha, "group_alpha");
  wg::WgmmaGemmParams odd_k = weight_fp4(DType::bfloat16, BlockFormat::nvfp4);
  odd_k.k = 1088;
  expect_refused(odd_k, "k must be a multiple of 128");
  wg::WgmmaGemmParams odd_n = weight_fp4(DType::bfloat16, BlockFormat::nvfp4);
  odd_n.n = 2112;
  expect_refused(odd_n, "n must be a multiple of 128");
}

TEST(WgmmaGemmUnsupported, BlockFp4StaysOneMatrix) {
  wg::WgmmaGemmParams p = grouped(wg::GemmScaling::block_fp4, DType::uint8);
  p.groups = 1;
  p.rows_per_group = p.rows;
  EXPECT_EQ(wg::wgmma_gemm_unsupported(p), std::nullopt);
  expect_refused(grouped(wg::GemmScaling::block_fp4, DType::uint8), "one matrix");
  wg::WgmmaGemmParams no_k = p;  // its consumers' loop takes at least one k-slice a tile
  no_k.k = 0;
  expect_refused(no_k, "k must be positive");
}

}  // namespace
