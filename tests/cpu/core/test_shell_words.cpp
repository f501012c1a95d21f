#include <gtest/gtest.h>

#include "core/shell_words.hpp"
#include "core/usage_error.hpp"

namespace kbench {
namespace {

using Words = std::vector<std::string>;

TEST(ShellWords, SplitsLikeShlex) {
  EXPECT_EQ(split_shell_words("  --routine rmsnorm   --batch_size 32\t-vv "),
            (Words{"--routine", "rmsnorm", "--batch_size", "32", "-vv"}));
  EXPECT_EQ(split_shell_words(R"(--case_tag "DeepSeek R1" --x 'a b' c\ d)"),
            (Words{"--case_tag", "DeepSeek R1", "--x", "a b", "c d"}));
  EXPECT_EQ(split_shell_words(R"(a"b c"d 'e'"f")"), (Words{"ab cd", "ef"}));
  // As Python's shlex.split: inside double quotes only \" and \\ are escapes.
  EXPECT_EQ(split_shell_words(R"("say \"hi\" \$x \n")"), (Words{R"(say "hi" \$x \n)"}));
  EXPECT_EQ(split_shell_words(R"("a\`b" "c\\d" e\$f)"), (Words{R"(a\`b)", R"(c\d)", "e$f"}));
  EXPECT_EQ(split_shell_words("''"), (Words{""}));
  EXPECT_TRUE(split_shell_words("   ").empty());
}

TEST(ShellWords, RejectsUnterminatedQuotes) {
  EXPECT_THROW((void)split_shell_words("--case_tag 'oops"), UsageError);
  EXPECT_THROW((void)split_shell_words("--case_tag \"oops"), UsageError);
  EXPECT_THROW((void)split_shell_words("trailing\\"), UsageError);
}

TEST(ShellWords, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(shell_quote("rmsnorm"), "rmsnorm");
  EXPECT_EQ(shell_quote("--case_tag"), "--case_tag");
  EXPECT_EQ(shell_quote("1e-06"), "1e-06");
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("it's"), "'it'\"'\"'s'");
}

TEST(ShellWords, QuoteAndSplitRoundTrip) {
  const Words words = {"kbench", "--case_tag", "a,b \"c\" 'd' $e\\f", "", "tab\there", "ünï"};
  EXPECT_EQ(split_shell_words(join_shell_words(words)), words);
}

}  // namespace
}  // namespace kbench

#include <sstream>

#include "core/log.hpp"

namespace kbench {
namespace {

TEST(Log, PerfLineIsByteForByteTheReference) {
  EXPECT_EQ(format_perf_line("cuda", 0.0030720, 0.0000412, 0.229, 0.1404),
            "[PERF] cuda           :: median time 0.003 ms; std 0.000 ms; achieved tflops 0.229 TFLOPs/sec; "
            "achieved tb_per_sec 0.140 TB/sec");
  // Long names are not cut (the reference pads to max(15, len)).
  EXPECT_EQ(format_perf_line("auto(fa2_tc_long)", 1, 2, 3, 4).substr(0, 26), "[PERF] auto(fa2_tc_long)::");
}

TEST(Log, PythonFloatRepr) {
  EXPECT_EQ(python_float(1.0), "1.0");
  EXPECT_EQ(python_float(1e-6f), "1e-06");
  EXPECT_EQ(python_float(0.07216878364870323), "0.07216878364870323");
  EXPECT_EQ(python_float(448.0f), "448.0");
}

TEST(Log, VerbosityGatesTheTaggedLines) {
  std::ostringstream out;
  Log log(out, 1);
  log.info_v("a");
  log.verbose("b");
  log.vverbose("c");
  log.warning("d");
  EXPECT_EQ(out.str(), "[INFO] a\n[VERBOSE] b\n[WARNING] d\n");
}

}  // namespace
}  // namespace kbench
