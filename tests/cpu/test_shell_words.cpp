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
  EXPECT_EQ(split_shell_words(R"("say \"hi\" \$x \n")"), (Words{R"(say "hi" $x \n)"}));
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
