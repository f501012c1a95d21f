// What kbench's wgmma GEMM takes and refuses, without a GPU (wgmma_gemm_unsupported,
// kernels/gemm/sm90): the problems its GEMM routines and MoE pipeline plan are taken, and each
// refusal names its reason.
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

}  // namespace
