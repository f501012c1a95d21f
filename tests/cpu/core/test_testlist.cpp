#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/testlist.hpp"
#include "core/usage_error.hpp"

namespace kbench {
namespace {

TEST(Testlist, SkipsBlankAndCommentLinesAndStrips) {
  const auto path = (std::filesystem::temp_directory_path() / "kbench_testlist_test.txt").string();
  std::ofstream(path) << "# a comment\n\n   \n  --routine rmsnorm --batch_size 1 --hidden_size 8  \r\n"
                         "\t# indented comment\n--routine rmsnorm_quant --batch_size 2 --hidden_size 16";
  const auto lines = read_testlist(path);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].number, 4);
  EXPECT_EQ(lines[0].text, "--routine rmsnorm --batch_size 1 --hidden_size 8");
  EXPECT_EQ(lines[1].number, 6);
  EXPECT_EQ(lines[1].text, "--routine rmsnorm_quant --batch_size 2 --hidden_size 16");
}

TEST(Testlist, UnreadableFileIsAUsageError) {
  EXPECT_THROW((void)read_testlist("/nonexistent/testlist.txt"), UsageError);
  EXPECT_THROW((void)read_testlist(std::filesystem::temp_directory_path().string()), UsageError);
}

}  // namespace
}  // namespace kbench
