// Issue 20: `auto` picks, on every point of the attention grid, a backend within 2% of kbench's
// fastest there, by the grid's committed measurements. Each testlist line of bench/attention_grid/
// expands to its cases in the runner's order; each case's auto_candidates (the routine's own rule)
// are looked up in the grid's CSV (the rows of that case, in the same order): the first candidate
// the grid ran with its refcheck passed must be within 2% of the fastest of fa2, fa2_tc and fa3.
// The CSVs are H100 runs of the kernels auto chooses among (bench/results/h100/attention_grid/):
// a kernel or plan change that moves a backend's time calls for a new grid run and this test with it.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/cli.hpp"
#include "core/csv.hpp"
#include "core/shell_words.hpp"
#include "core/testlist.hpp"
#include "routines/builtin_routines.hpp"

namespace kbench {
namespace {

constexpr double kWithin = 1.02;
const char* const kKbenchBackends[] = {"fa2", "fa2_tc", "fa3"};

// One grid point of a results CSV: its first row's values and each backend's row.
struct GridPoint {
  CsvRow first;
  std::map<std::string, CsvRow> backends;
};

// The CSV's rows grouped by case: consecutive rows with the same case tag and shape.
std::vector<GridPoint> read_grid(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = parse_csv_line(line);
  const char* const shape[] = {"routine", "case_tag", "batch_size", "s_qo", "s_kv", "num_qo_heads", "num_kv_heads",
                               "head_dim_qk", "page_size", "kv_layout", "q_dtype", "kv_dtype", "causal",
                               "random_actual_seq_len"};
  std::vector<GridPoint> points;
  while (std::getline(in, line)) {
    const std::vector<std::string> fields = parse_csv_line(line);
    CsvRow row;
    for (std::size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
    const bool same = !points.empty() && std::all_of(std::begin(shape), std::end(shape), [&](const char* c) {
      return points.back().first[c] == row[c];
    });
    if (!same) points.push_back({row, {}});
    points.back().backends[row["backend"]] = row;
  }
  return points;
}

// The median time of `backend` at the point where it ran and its refcheck passed.
std::optional<double> passed_time(const GridPoint& point, const std::string& backend) {
  const auto it = point.backends.find(backend);
  if (it == point.backends.end()) return std::nullopt;
  const CsvRow& row = it->second;
  const auto status = row.find("refcheck_status");
  const auto time = row.find("median_time");
  if (status == row.end() || status->second != "passed" || time == row.end() || time->second.empty()) return std::nullopt;
  return std::stod(time->second);
}

void expect_auto_within_the_best(const std::string& testlist, const std::string& csv) {
  const RoutineRegistry registry = make_builtin_registry();
  const std::string root = std::string(KBENCH_SOURCE_DIR) + "/";
  const std::vector<GridPoint> points = read_grid(root + csv);
  std::size_t next = 0;
  for (const TestlistLine& line : read_testlist(root + testlist)) {
    for (const CaseArgs& args : expand_sweep(parse_case(split_shell_words(line.text), registry))) {
      ASSERT_LT(next, points.size()) << csv << " has fewer points than " << testlist;
      const GridPoint& point = points[next++];
      const std::string where = testlist + ":" + std::to_string(line.number) + " " + repro_command(args);
      // The CSV's point is this case (the runner's order).
      for (const char* flag : {"case_tag", "batch_size", "s_kv", "num_qo_heads", "num_kv_heads"}) {
        ASSERT_EQ(point.first.at(flag), args.display(flag)) << where;
      }
      double best = std::numeric_limits<double>::infinity();
      for (const char* name : kKbenchBackends) best = std::min(best, passed_time(point, name).value_or(best));
      ASSERT_TRUE(best < std::numeric_limits<double>::infinity()) << where << ": no kbench backend passed";
      const Routine& routine = *registry.find(args.routine());
      std::optional<double> picked;
      std::string pick;
      for (const std::string& candidate : routine.auto_candidates(*routine.make_case(args))) {
        picked = passed_time(point, candidate);
        pick = candidate;
        if (picked) break;
      }
      ASSERT_TRUE(picked.has_value()) << where << ": none of auto's candidates ran";
      EXPECT_LE(*picked, kWithin * best) << where << ": auto picks " << pick << ", " << *picked / best
                                         << "x the best kbench backend";
    }
  }
  EXPECT_EQ(next, points.size()) << csv << " has more points than " << testlist;
}

TEST(AttentionGridAuto, DecodeWithinTwoPercentOfTheBest) {
  expect_auto_within_the_best("bench/attention_grid/decode_grid.txt",
                              "bench/results/h100/attention_grid/session29/decode_grid.csv");
}

TEST(AttentionGridAuto, PrefillWithinTwoPercentOfTheBest) {
  expect_auto_within_the_best("bench/attention_grid/prefill_grid.txt",
                              "bench/results/h100/attention_grid/session30/prefill_grid.csv");
}

}  // namespace
}  // namespace kbench
