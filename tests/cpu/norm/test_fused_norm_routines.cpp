// The fused norm routines (rmsnorm_fp4quant, add_rmsnorm_fp4quant, gemma_fused_add_rmsnorm,
// fused_rmsnorm_silu, layernorm_quant) on the CPU: byte formulas, flags and their defaults, what
// the backends refuse and why, and the host quantizer's block rule against the kernels' own.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "case_from_line.hpp"
#include "kernels/quantization/block_formats.hpp"
#include "routines/builtin_routines.hpp"
#include "routines/norm/norm_case.hpp"
#include "routines/quantization/quant_reference.hpp"

namespace kbench {
namespace {

using kernels::quant::BlockFormat;
using kernels::quant::SfLayout;

class FusedNorms : public ::testing::Test {
 protected:
  RoutineRegistry registry = make_builtin_registry();
  NormProblem problem(const std::string& line) {
    const auto c = testing::case_from_line(registry, line);
    return dynamic_cast<const NormCase&>(*c).problem();
  }
  double bytes(const std::string& line) { return testing::case_from_line(registry, line)->bytes(); }
  std::string error(const std::string& line) { return testing::case_error_of(registry, line); }
  Support cuda_support(const std::string& line) {
    const auto c = testing::case_from_line(registry, line);
    const CaseArgs args = parse_case(split_shell_words(line), registry);
    return registry.find(args.routine())->find_backend("cuda")->can_implement(*c);
  }
};

TEST_F(FusedNorms, BytesFollowTheFactSheets) {
  const double n = 64.0 * 8192, h = 8192;
  // norm_quant.md: N b + H b + N/2 + N/block; the add variant 3 N b + H b + N/2 + (N/block) x layouts.
  EXPECT_DOUBLE_EQ(bytes("-R rmsnorm_fp4quant --batch_size 64 --hidden_size 8192"), n * 2 + h * 2 + n / 2 + n / 16);
  EXPECT_DOUBLE_EQ(bytes("-R rmsnorm_fp4quant --batch_size 64 --hidden_size 8192 --out_dtype mxfp4"),
                   n * 2 + h * 2 + n / 2 + n / 32);
  EXPECT_DOUBLE_EQ(bytes("-R add_rmsnorm_fp4quant --batch_size 64 --hidden_size 8192"), 3 * n * 2 + h * 2 + n / 2 + n / 16);
  EXPECT_DOUBLE_EQ(bytes("-R add_rmsnorm_fp4quant --batch_size 64 --hidden_size 8192 --output_both_sf_layouts"),
                   3 * n * 2 + h * 2 + n / 2 + 2 * n / 16);
  // compat.md's fused_add variants; rmsnorm's for the SiLU form; LayerNorm: fp32 gamma and beta.
  EXPECT_DOUBLE_EQ(bytes("-R gemma_fused_add_rmsnorm --batch_size 64 --hidden_size 8192"), 4 * n * 2 + h * 2);
  EXPECT_DOUBLE_EQ(bytes("-R fused_rmsnorm_silu --batch_size 64 --hidden_size 8192"), 2 * n * 2 + h * 2);
  EXPECT_DOUBLE_EQ(bytes("-R layernorm_quant --batch_size 64 --hidden_size 8192"), n * 2 + 2 * 4 * h + n);
  EXPECT_DOUBLE_EQ(testing::case_from_line(registry, "-R add_rmsnorm_fp4quant --batch_size 64 --hidden_size 8192")->flops(),
                   6 * n);
  EXPECT_DOUBLE_EQ(testing::case_from_line(registry, "-R rmsnorm_fp4quant --batch_size 64 --hidden_size 8192")->flops(), 5 * n);
}

TEST_F(FusedNorms, Fp4FlagsAndDefaults) {
  // --out_dtype's default fp8_e4m3 means nvfp4, as in the reference; linear scales by default.
  NormProblem p = problem("-R rmsnorm_fp4quant --batch_size 32 --hidden_size 4096");
  EXPECT_EQ(p.fp4_format, BlockFormat::nvfp4);
  EXPECT_EQ(p.fp4_block(), 16);
  EXPECT_EQ(p.sf_layouts(), std::vector<SfLayout>{SfLayout::linear});
  EXPECT_FLOAT_EQ(p.eps, 1e-6f);
  p = problem("-R rmsnorm_fp4quant --batch_size 32 --hidden_size 4096 --out_dtype mxfp4 --is_sf_swizzled_layout");
  EXPECT_EQ(p.fp4_format, BlockFormat::mxfp4);
  EXPECT_EQ(p.fp4_block(), 32);
  EXPECT_EQ(p.sf_layouts(), std::vector<SfLayout>{SfLayout::swizzled_128x4});
  p = problem("-R add_rmsnorm_fp4quant --batch_size 32 --hidden_size 4096 --output_both_sf_layouts");
  EXPECT_EQ(p.sf_layouts(), (std::vector<SfLayout>{SfLayout::linear, SfLayout::swizzled_128x4}));
  EXPECT_TRUE(p.fused_add());
  EXPECT_FALSE(p.in_place());
  // The plain variant ignores --output_both_sf_layouts with a warning, as the reference does.
  p = problem("-R rmsnorm_fp4quant --batch_size 32 --hidden_size 4096 --output_both_sf_layouts");
  EXPECT_EQ(p.sf_layouts(), std::vector<SfLayout>{SfLayout::linear});
  EXPECT_EQ(p.ignored_flags, std::vector<std::string>{"output_both_sf_layouts"});
  p = problem("-R rmsnorm_fp4quant --batch_size 32 --num_heads 32 --hidden_size 128 --use_global_scale");
  EXPECT_EQ(p.rows(), 1024);
  EXPECT_TRUE(p.use_global_scale);
  EXPECT_TRUE(p.ignored_flags.empty());
  EXPECT_NE(error("-R rmsnorm_fp4quant --batch_size 2 --hidden_size 4096 --out_dtype fp8_e5m2").find("not an FP4 format"),
            std::string::npos);
  EXPECT_NE(error("-R rmsnorm_fp4quant --batch_size 2 --hidden_size 100").find("multiple of 16"), std::string::npos);
  EXPECT_NE(error("-R add_rmsnorm_fp4quant --batch_size 2 --hidden_size 48").find("at least 64"), std::string::npos);
  EXPECT_NE(error("-R rmsnorm_fp4quant --batch_size 2 --hidden_size 2064 --out_dtype mxfp4").find("multiple of 32"),
            std::string::npos);
}

TEST_F(FusedNorms, OtherNormsFlags) {
  NormProblem p = problem("-R layernorm_quant --batch_size 8 --hidden_size 2880 --out_dtype fp8_e5m2 --scale 0.5");
  EXPECT_EQ(p.out_dtype, DType::fp8_e5m2);
  EXPECT_FLOAT_EQ(p.scale, 0.5f);
  EXPECT_TRUE(p.quantized());
  EXPECT_NE(error("-R layernorm_quant --batch_size 2 --hidden_size 64 --out_dtype nvfp4").find("fp8_e4m3 or fp8_e5m2"),
            std::string::npos);
  p = problem("-R gemma_fused_add_rmsnorm --batch_size 8 --hidden_size 4096 --enable_pdl");
  EXPECT_TRUE(p.fused_add());
  EXPECT_TRUE(p.in_place());
  EXPECT_TRUE(p.enable_pdl);
  p = problem("-R fused_rmsnorm_silu --batch_size 8 --hidden_size 4096 --is_sf_swizzled_layout");
  EXPECT_EQ(p.out_dtype, DType::bfloat16);
  EXPECT_EQ(p.ignored_flags, std::vector<std::string>{"is_sf_swizzled_layout"});
}

TEST_F(FusedNorms, CudaBackendSaysWhatItDoesNotTake) {
  EXPECT_TRUE(cuda_support("-R rmsnorm_fp4quant --batch_size 2 --hidden_size 32768").supported);
  const Support wide = cuda_support("-R rmsnorm_fp4quant --batch_size 2 --hidden_size 65536");
  EXPECT_FALSE(wide.supported);
  EXPECT_NE(wide.reason.find("register path"), std::string::npos) << wide.reason;
  EXPECT_FALSE(cuda_support("-R layernorm_quant --batch_size 2 --hidden_size 100").supported);
  EXPECT_TRUE(cuda_support("-R layernorm_quant --batch_size 2 --hidden_size 7168").supported);
  // The RMSNorm kernels' loop paths take any hidden size.
  EXPECT_TRUE(cuda_support("-R fused_rmsnorm_silu --batch_size 2 --hidden_size 100").supported);
  EXPECT_TRUE(cuda_support("-R gemma_fused_add_rmsnorm --batch_size 2 --hidden_size 65536").supported);
}

TEST_F(FusedNorms, BuiltNotForeign) {
  for (const char* name : {"rmsnorm_fp4quant", "add_rmsnorm_fp4quant", "gemma_fused_add_rmsnorm", "fused_rmsnorm_silu",
                           "layernorm_quant"}) {
    ASSERT_NE(registry.find(name), nullptr) << name;
    EXPECT_EQ(registry.find(name)->family(), "norm");
  }
}

TEST_F(FusedNorms, BytesPerCopyCountThePaddedScales) {
  // 130 rows x 4096 / 16 = 256 scale columns: 128x4 pads the rows to 256.
  const auto c = testing::case_from_line(registry, "-R add_rmsnorm_fp4quant --batch_size 130 --hidden_size 4096 "
                                                   "--output_both_sf_layouts");
  const std::size_t n = 130 * 4096;
  EXPECT_EQ(c->bytes_per_copy(), n * 2 + n * 2 + n / 2 + 130 * 256 + 256 * 256);
}

// The host quantizer's block rule (the refcheck's) and the kernels' (block_formats.hpp) agree on
// every amax the fused norms can meet, and at each side of the scale boundaries.
TEST(FusedNormReference, BlockScaleEqualsTheKernelsRule) {
  std::vector<float> amaxes = {0.0f, 1e-30f, 1e-6f, 0.1f, 1.0f, 6.0f, 448.0f * 6.0f, 3e4f};
  for (int e = -20; e <= 12; ++e) {
    for (float m : {1.0f, 1.0625f, 1.5f, 1.9375f}) {
      const float a = std::ldexp(m, e) * 6.0f;
      amaxes.insert(amaxes.end(), {a, std::nextafter(a, 0.0f), std::nextafter(a, 1e30f)});
    }
  }
  for (BlockFormat format : {BlockFormat::nvfp4, BlockFormat::mxfp4}) {
    for (float amax : amaxes) {
      for (float g : {1.0f, 0.37f}) {
        const auto host = quant_reference::block_scale(format, amax, g);
        const auto kernel = kernels::quant::block_scale(format, amax, format == BlockFormat::nvfp4 ? g : 1.0f);
        if (format != BlockFormat::nvfp4 && g != 1.0f) continue;
        EXPECT_EQ(host.sf, kernel.sf) << amax;
        EXPECT_EQ(host.factor, kernel.factor) << amax;
      }
    }
  }
}

}  // namespace
}  // namespace kbench
