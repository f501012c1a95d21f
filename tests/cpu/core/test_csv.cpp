#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>
#include <utility>

#include "core/csv.hpp"
#include "core/usage_error.hpp"
#include "routines/builtin_routines.hpp"

namespace kbench {
namespace {

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string temp_path(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("kbench_csv_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::filesystem::remove(path);
  return path.string();
}

TEST(Csv, EscapesPerRfc4180) {
  EXPECT_EQ(csv_escape("plain"), "plain");
  EXPECT_EQ(csv_escape("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_escape("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_escape("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_escape(""), "");
}

TEST(Csv, LineRoundTrip) {
  const std::vector<std::string> fields = {"rmsnorm", "a,b", "q\"uote", "", "kbench --case_tag 'x, y'"};
  EXPECT_EQ(parse_csv_line(csv_line(fields)), fields);
}

TEST(Csv, ColumnsFollowTheReferenceThenKbench) {
  const auto columns = csv_columns(make_builtin_registry());
  const std::vector<std::string> leading = {"routine", "median_time", "std_time", "tflops",
                                            "tb_per_sec", "backend", "resolved_backend"};
  ASSERT_GE(columns.size(), leading.size());
  EXPECT_TRUE(std::equal(leading.begin(), leading.end(), columns.begin()));
  const std::set<std::string> unique(columns.begin(), columns.end());
  EXPECT_EQ(unique.size(), columns.size()) << "a column name repeats";
  const auto at = [&](const std::string& name) {
    return std::find(columns.begin(), columns.end(), name) - columns.begin();
  };
  // The reference ends its columns with these four, in this order; kbench's extras follow.
  EXPECT_EQ(at("case_tag") + 1, at("generate_repro_command"));
  EXPECT_EQ(at("generate_repro_command") + 1, at("repro_command"));
  EXPECT_EQ(at("random_seed") + 1, at("case_tag"));
  for (const char* extra : {"timer", "min_time", "max_time", "num_samples", "gpu_name", "refcheck_status"}) {
    EXPECT_GT(at(extra), at("repro_command")) << extra;
    EXPECT_LT(at(extra), static_cast<long>(columns.size())) << extra;
  }
  // The reference's newest groups, in its order: attention's additions, then moe_comm, mamba, gdn.
  for (const auto& [before, after] : std::vector<std::pair<std::string, std::string>>{
           {"resolved_backend", "autotuned"},
           {"random_actual_seq_len", "is_var_seq"},
           {"is_var_seq", "cute_dsl_impl"},
           {"fp4_mode", "cold_l2_cache"},
           {"ep_rank", "max_num_tokens"},
           {"num_rows", "max_seq_len"},
           {"kv_layout", "nheads"},
           {"dt_softplus", "num_q_heads"},
           {"use_qk_l2norm", "kda_variant"},
           {"total_kv", "batch_size"}}) {
    EXPECT_EQ(at(before) + 1, at(after)) << before << " then " << after;
  }
  // A name the reference repeats keeps its first place (moe's num_tokens, before moe_comm's).
  EXPECT_LT(at("num_tokens"), at("intermediate_size"));
  // Every norm flag has a column.
  for (const char* flag : {"batch_size", "hidden_size", "num_heads", "input_dtype", "out_dtype", "eps", "scale"}) {
    EXPECT_LT(at(flag), static_cast<long>(columns.size())) << flag;
  }
}

TEST(Csv, WriterAppendsAndWritesTheHeaderOnce) {
  const std::string path = temp_path("append.csv");
  const std::vector<std::string> columns = {"routine", "case_tag", "median_time"};
  {
    CsvWriter w(path, columns);
    w.write_row({{"routine", "rmsnorm"}, {"case_tag", "a,b"}});
  }
  {
    CsvWriter w(path, columns);
    w.write_row({{"routine", "rmsnorm_quant"}, {"median_time", "0.5"}});
  }
  const auto lines = read_lines(path);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "routine,case_tag,median_time");
  EXPECT_EQ(parse_csv_line(lines[1]), (std::vector<std::string>{"rmsnorm", "a,b", ""}));
  EXPECT_EQ(parse_csv_line(lines[2]), (std::vector<std::string>{"rmsnorm_quant", "", "0.5"}));
}

TEST(Csv, RowsAreOnDiskAsSoonAsWritten) {
  const std::string path = temp_path("flush.csv");
  CsvWriter w(path, {"routine"});
  w.write_row({{"routine", "rmsnorm"}});
  EXPECT_EQ(read_lines(path).size(), 2u);  // no close needed
}

// Rows appended under another header (an older kbench's, the reference's, not a CSV at all) made a
// file no reader takes: refused, naming the path and the first difference.
TEST(Csv, RefusesAFileWithAnotherHeader) {
  const std::string path = temp_path("foreign.csv");
  std::ofstream(path) << "other,header\n1,2\n";
  try {
    CsvWriter w(path, {"routine"});
    ADD_FAILURE() << "appended under a foreign header";
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("--output_path: '" + path + "' already holds rows under another header"), std::string::npos)
        << message;
    EXPECT_NE(message.find("column 1 is 'other' there and 'routine' here"), std::string::npos) << message;
  }
  EXPECT_EQ(read_lines(path).size(), 2u);  // untouched
  // A blank first line was taken for "no header" and a second header landed mid-file.
  const std::string blank = temp_path("blank_first_line.csv");
  std::ofstream(blank) << "\nrmsnorm\n";
  EXPECT_THROW(CsvWriter(blank, {"routine"}), UsageError);
  EXPECT_THROW(CsvWriter(path, {"routine"}, "--baseline_csv"), UsageError);
}

// A CSV whose last line lost its newline (an interrupted write) had the next row glued onto it.
TEST(Csv, EndsALastLineLeftWithoutItsNewline) {
  const std::string path = temp_path("no_newline.csv");
  std::ofstream(path) << "routine,median_time\nrmsnorm,0.5";
  {
    CsvWriter w(path, {"routine", "median_time"});
    w.write_row({{"routine", "gemma_rmsnorm"}, {"median_time", "0.25"}});
  }
  const auto lines = read_lines(path);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "rmsnorm,0.5");
  EXPECT_EQ(lines[2], "gemma_rmsnorm,0.25");
}

// A FIFO (or /dev/stdout piped on) was read back for its header and blocked forever.
TEST(Csv, StreamsToAPipe) {
  const std::string path = temp_path("fifo.csv");
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0) << std::strerror(errno);
  std::string received;
  std::thread reader([&] {
    std::ifstream in(path);
    received.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  });
  {
    CsvWriter w(path, {"routine"});
    w.write_row({{"routine", "rmsnorm"}});
  }
  reader.join();
  EXPECT_EQ(received, "routine\nrmsnorm\n");
}

TEST(Csv, UnknownColumnIsAProgrammingError) {
  CsvWriter w(temp_path("unknown.csv"), {"routine"});
  EXPECT_THROW(w.write_row({{"nope", "1"}}), std::logic_error);
}

TEST(Csv, UnwritablePathIsAUsageError) {
  EXPECT_THROW(CsvWriter("/nonexistent-dir/kbench/out.csv", {"routine"}), UsageError);
  EXPECT_THROW(CsvWriter(std::filesystem::temp_directory_path().string(), {"routine"}), UsageError);
}

}  // namespace
}  // namespace kbench
