// The quantization routines without a GPU: the reference's byte formulas, flag validation and the
// tensors a case describes.
#include <gtest/gtest.h>

#include "core/cli.hpp"
#include "core/shell_words.hpp"
#include "routines/builtin_routines.hpp"
#include "routines/quantization/quant_case.hpp"

#include "case_from_line.hpp"

namespace kbench {
namespace {

class QuantRoutines : public ::testing::Test {
 protected:
  RoutineRegistry registry = make_builtin_registry();

  std::unique_ptr<Case> make(const std::string& line) { return testing::case_from_line(registry, line); }
  const QuantProblem& problem(const std::unique_ptr<Case>& c) { return static_cast<const QuantCase&>(*c).problem(); }
  std::string case_error(const std::string& line) { return testing::case_error_of(registry, line); }
};

TEST_F(QuantRoutines, BytesAreTheReferencesFormulas) {
  const double n = 1024.0 * 4096.0;
  EXPECT_DOUBLE_EQ(make("-R mxfp8_quantize --m 1024 --k 4096")->bytes(), n * 2 + n + n / 32);
  EXPECT_DOUBLE_EQ(make("-R mxfp8_quantize --m 1024 --k 4096 --alignment 64")->bytes(), n * 2 + n + n / 64);  // its quirk
  EXPECT_DOUBLE_EQ(make("-R mxfp4_quantize --m 1024 --k 4096")->bytes(), n * 2 + n / 2 + n / 32);
  EXPECT_DOUBLE_EQ(make("-R nvfp4_quantize --m 1024 --k 4096")->bytes(), n * 2 + 4 + n / 2 + n / 16);
  EXPECT_DOUBLE_EQ(make("-R nvfp4_quantize --m 1024 --k 4096 --sf_vec_size 32 --per_token_activation")->bytes(),
                   n * 2 + 4 + n / 2 + n / 32 + 4 * 1024);
  EXPECT_DOUBLE_EQ(make("-R nvfp4_batched_quantize --batch_size 4 --m 1024 --k 4096 --input_dtype float16")->bytes(),
                   4 * n * 2 + 4 + 4 * n / 2 + 4 * n / 16);
  EXPECT_DOUBLE_EQ(make("-R nvfp4_quantize --m 1024 --k 4096")->flops(), 3 * n);
}

TEST_F(QuantRoutines, FlagsChooseLayoutsAndBlocks) {
  using kernels::quant::SfLayout;
  EXPECT_EQ(problem(make("-R mxfp8_quantize --m 8 --k 64")).layout, SfLayout::swizzled_128x4);
  EXPECT_EQ(problem(make("-R mxfp8_quantize --m 8 --k 64 --no_sf_swizzled_layout")).layout, SfLayout::linear);
  EXPECT_EQ(problem(make("-R mxfp4_quantize --m 8 --k 64 --sf_layout 8x4")).layout, SfLayout::swizzled_8x4);
  EXPECT_EQ(problem(make("-R nvfp4_quantize --m 8 --k 64 --sf_layout linear")).layout, SfLayout::linear);
  EXPECT_EQ(problem(make("-R nvfp4_batched_quantize --batch_size 2 --m 8 --k 64")).layout, SfLayout::swizzled_128x4);
  EXPECT_EQ(problem(make("-R mxfp4_quantize --m 8 --k 64")).sf_vec_size, 32);
  EXPECT_EQ(problem(make("-R nvfp4_quantize --m 8 --k 64 --sf_vec_size 32")).sf_vec_size, 32);
  // mxfp8's --alignment pads the columns: 96 -> 128 bytes per row, 4 scale columns.
  const kernels::QuantizeParams s = problem(make("-R mxfp8_quantize --m 8 --k 96 --alignment 64")).shape();
  EXPECT_EQ(s.padded_columns, 128);
  EXPECT_EQ(s.output_row_bytes(), 128);
  EXPECT_EQ(s.scale_bytes_per_batch(), 128 * 4);
}

TEST_F(QuantRoutines, TensorsAreDescribed) {
  const auto c = make("-R nvfp4_batched_quantize --batch_size 4 --m 100 --k 64");
  const auto t = c->tensors();
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].shape, (std::vector<int64_t>{4, 100, 64}));
  EXPECT_EQ(t[1].shape, (std::vector<int64_t>{4, 100, 32}));
  EXPECT_EQ(t[1].dtype, DType::uint8);
  EXPECT_EQ(t[2].shape, (std::vector<int64_t>{4, 128 * 4}));
  EXPECT_EQ(make("-R nvfp4_quantize --m 10 --k 64 --per_token_activation")->tensors().back().name, "token_scales");
}

TEST_F(QuantRoutines, ValidationNamesTheFlag) {
  EXPECT_NE(case_error("-R mxfp8_quantize --m 0 --k 64").find("--m must be positive, got 0"), std::string::npos);
  EXPECT_NE(case_error("-R mxfp4_quantize --m 8 --k 48").find("--k 48 is not a multiple of the scale block (32)"),
            std::string::npos);
  EXPECT_NE(case_error("-R nvfp4_quantize --m 8 --k 40").find("(16)"), std::string::npos);
  EXPECT_NE(case_error("-R nvfp4_quantize --m 8 --k 64 --sf_vec_size 8").find("--sf_vec_size must be 16 or 32"),
            std::string::npos);
  EXPECT_NE(case_error("-R mxfp8_quantize --m 8 --k 64 --alignment 48").find("--alignment must be a positive multiple of 32"),
            std::string::npos);
  EXPECT_NE(case_error("-R nvfp4_quantize --m 100 --k 64 --do_shuffle").find("--do_shuffle needs --m a multiple of 128"),
            std::string::npos);
  EXPECT_NE(case_error("-R nvfp4_quantize --m 128 --k 64 --do_shuffle --sf_layout 8x4").find("--sf_layout 128x4"),
            std::string::npos);
  EXPECT_NE(case_error("-R nvfp4_batched_quantize --m 8 --k 64").find("--batch_size is required"), std::string::npos);
  EXPECT_NE(case_error("-R nvfp4_quantize --m 8 --k 64 --global_scale 0").find("--global_scale must be a positive float"),
            std::string::npos);
  EXPECT_NE(case_error("-R nvfp4_quantize --m 2097152 --k 1048576").find("over 2^40"), std::string::npos);
}

TEST_F(QuantRoutines, MeaninglessFlagsAreWarnedAbout) {
  EXPECT_EQ(problem(make("-R mxfp4_quantize --m 8 --k 64 --global_scale 2 --do_shuffle")).ignored_flags,
            (std::vector<std::string>{"do_shuffle", "global_scale"}));
  EXPECT_TRUE(problem(make("-R nvfp4_quantize --m 8 --k 64 --global_scale 2")).ignored_flags.empty());
}

}  // namespace
}  // namespace kbench
