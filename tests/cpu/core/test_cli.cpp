#include <gtest/gtest.h>

#include <algorithm>

#include "core/cli.hpp"
#include "core/shell_words.hpp"
#include "core/usage_error.hpp"
#include "routines/builtin_routines.hpp"

namespace kbench {
namespace {

class Cli : public ::testing::Test {
 protected:
  RoutineRegistry registry = make_builtin_registry();

  CaseArgs parse(const std::string& line) {
    const auto words = split_shell_words(line);
    return parse_case(words, registry);
  }
  std::string usage_error(const std::string& line) {
    const auto words = split_shell_words(line);
    try {
      (void)parse_invocation(words, registry);
    } catch (const UsageError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no usage error for: " << line;
    return {};
  }
};

TEST_F(Cli, ParsesTheSeedRmsnormQuantCommand) {
  const CaseArgs a = parse(
      "--routine rmsnorm_quant --batch_size 32 --hidden_size 4096 --input_dtype bfloat16 --out_dtype fp8_e4m3 "
      "--scale 1.0 --refcheck -vv --generate_repro_command --case_tag \"rmsnorm_quant_fp8_e4m3\"");
  EXPECT_EQ(a.routine(), "rmsnorm_quant");
  EXPECT_EQ(a.integer("batch_size"), 32);
  EXPECT_EQ(a.integer("hidden_size"), 4096);
  EXPECT_EQ(a.text("out_dtype"), "fp8_e4m3");
  EXPECT_DOUBLE_EQ(a.real("scale"), 1.0);
  EXPECT_TRUE(a.flag("refcheck"));
  EXPECT_TRUE(a.flag("generate_repro_command"));
  EXPECT_EQ(a.count("verbose"), 2);
  EXPECT_EQ(a.text("case_tag"), "rmsnorm_quant_fp8_e4m3");
}

TEST_F(Cli, SharedFlagDefaultsMatchTheReference) {
  const CaseArgs a = parse("-R rmsnorm --batch_size 1 --hidden_size 8");
  EXPECT_EQ(a.integer("num_iters"), 30);
  EXPECT_EQ(a.integer("dry_run_iters"), 5);
  EXPECT_EQ(a.integer("random_seed"), 42);
  EXPECT_EQ(a.count("verbose"), 0);
  EXPECT_FALSE(a.flag("refcheck"));
  EXPECT_FALSE(a.flag("no_cuda_graph"));
  EXPECT_FALSE(a.flag("enable_pdl"));
  EXPECT_FALSE(a.has("output_path"));
  EXPECT_FALSE(a.has("case_tag"));
  EXPECT_FALSE(a.has("backends"));
  EXPECT_FALSE(a.has("num_heads"));
  EXPECT_EQ(a.text("input_dtype"), "bfloat16");
  EXPECT_DOUBLE_EQ(a.real("eps"), 1e-6);
}

TEST_F(Cli, ShortFlagsEqualsFormsAndRepeats) {
  const CaseArgs a = parse("--routine=rmsnorm --batch_size=8 --hidden_size 16 -n 7 -d 0 -v -v --input_dtype float16 "
                           "--input_dtype bfloat16 --batch_size 9 10 --batch_size=11");
  EXPECT_EQ(a.integer("batch_size"), 11);  // a flag given twice keeps its last occurrence, as with argparse
  EXPECT_EQ(a.text("input_dtype"), "bfloat16");
  EXPECT_EQ(parse("-R rmsnorm --batch_size 1 2 --hidden_size 8 --batch_size 3 4").values("batch_size"),
            (std::vector<std::string>{"3", "4"}));
  EXPECT_EQ(a.integer("num_iters"), 7);
  EXPECT_EQ(a.integer("dry_run_iters"), 0);
  EXPECT_EQ(a.count("verbose"), 2);
}

TEST_F(Cli, SeveralBackends) {
  const CaseArgs a = parse("--routine rmsnorm --backends cuda cute-dsl --batch_size 1 --hidden_size 8");
  EXPECT_EQ(a.list("backends"), (std::vector<std::string>{"cuda", "cute-dsl"}));
}

TEST_F(Cli, NumericFlagsSweepEveryCombination) {
  const CaseArgs a = parse("-R rmsnorm --batch_size 1 2 3 --hidden_size 64 128 --eps 1e-5 --num_heads 4");
  const auto cases = expand_sweep(a);
  ASSERT_EQ(cases.size(), 6u);
  // Earlier flags vary slowest.
  EXPECT_EQ(cases[0].integer("batch_size"), 1);
  EXPECT_EQ(cases[0].integer("hidden_size"), 64);
  EXPECT_EQ(cases[1].integer("batch_size"), 1);
  EXPECT_EQ(cases[1].integer("hidden_size"), 128);
  EXPECT_EQ(cases[5].integer("batch_size"), 3);
  EXPECT_EQ(cases[5].integer("hidden_size"), 128);
  for (const CaseArgs& c : cases) {
    EXPECT_EQ(c.integer("num_heads"), 4);
    EXPECT_TRUE(c.given("batch_size"));
    // Each case's repro command names its own single values.
    const auto words = split_shell_words(repro_command(c));
    const std::vector<std::string> args(words.begin() + 1, words.end());
    EXPECT_EQ(expand_sweep(parse_case(args, registry)).size(), 1u);
  }
  EXPECT_THROW((void)a.integer("batch_size"), std::logic_error);  // unexpanded
  EXPECT_EQ(expand_sweep(parse("-R rmsnorm --batch_size 1 --hidden_size 8")).size(), 1u);
}

TEST_F(Cli, SweepValuesAreEachValidated) {
  EXPECT_NE(usage_error("-R rmsnorm --batch_size 1 x --hidden_size 8").find("'x' is not an integer"), std::string::npos);
  EXPECT_NE(usage_error("-R rmsnorm --batch_size 1 --hidden_size 8 -n 5 0").find("--num_iters"), std::string::npos);
  EXPECT_NE(usage_error("-R rmsnorm --batch_size 1 --hidden_size 8 --baseline_csv x.csv").find("needs --baseline"),
            std::string::npos);
  EXPECT_NE(usage_error("-R rmsnorm --batch_size 1 --hidden_size 8 --backends cuda --baseline cuda --baseline_csv x.csv")
                .find("one other backend"),
            std::string::npos);
}

TEST_F(Cli, SweepsAreCappedBeforeTheyAreExpanded) {
  std::string values;
  for (int i = 1; i <= 400; ++i) values += " " + std::to_string(i);
  // 400 x 400 = 160,000 cases: refused with the flag that crossed the limit (was bad_alloc / SIGABRT
  // at millions, after quadratic work).
  const std::string message = usage_error("--routine rmsnorm --batch_size" + values + " --hidden_size" + values);
  EXPECT_NE(message.find("over 100000 cases (at --hidden_size)"), std::string::npos) << message;
  const CaseArgs a = parse("--routine rmsnorm --batch_size" + values + " --hidden_size 8 16");
  EXPECT_EQ(sweep_size(a), 800u);
  EXPECT_EQ(expand_sweep(a).size(), 800u);
}

TEST_F(Cli, NegativeNumbersAreValues) {
  // Parsed as values, then rejected by the routine's own validation (not as unknown flags).
  const CaseArgs a = parse("--routine rmsnorm --batch_size -4 --hidden_size 8");
  EXPECT_EQ(a.integer("batch_size"), -4);
}

TEST_F(Cli, Commands) {
  EXPECT_EQ(parse_invocation(std::vector<std::string>{"--list"}, registry).command, Command::list);
  EXPECT_EQ(parse_invocation(std::vector<std::string>{"--help"}, registry).command, Command::help);
  const auto routine_help = parse_invocation(std::vector<std::string>{"--routine", "rmsnorm", "--help"}, registry);
  EXPECT_EQ(routine_help.command, Command::help);
  EXPECT_NE(routine_help.help_text.find("--hidden_size"), std::string::npos);
  EXPECT_NE(routine_help.help_text.find("default: bfloat16"), std::string::npos);
  EXPECT_NE(routine_help.help_text.find("-n, --num_iters"), std::string::npos);
  const auto testlist = parse_invocation(
      std::vector<std::string>{"--testlist", "t.txt", "--output_path", "o.csv", "--refcheck"}, registry);
  EXPECT_EQ(testlist.command, Command::run_testlist);
  EXPECT_EQ(testlist.args.text("output_path"), "o.csv");
}

TEST_F(Cli, ARepeatedRoutineKeepsTheLast) {
  // As argparse: the first --routine won before, so the flags were checked against the wrong routine.
  EXPECT_EQ(parse("--routine rmsnorm --routine gemma_rmsnorm --batch_size 1 --hidden_size 8").routine(), "gemma_rmsnorm");
  EXPECT_EQ(parse("-R rmsnorm --routine=gemma_rmsnorm --batch_size 1 --hidden_size 8").routine(), "gemma_rmsnorm");
}

TEST_F(Cli, TopLevelHelpKeepsNamesApartFromDescriptions) {
  // Names of 28+ characters ran into their descriptions. (Found with the space after them: top_k is
  // also the start of top_k_sampling_from_probs.)
  const std::string help = top_level_help(registry);
  for (const auto& r : registry.all()) {
    const auto at = help.find("    " + std::string(r->name()) + " ");
    ASSERT_NE(at, std::string::npos) << r->name();
    EXPECT_EQ(help.substr(at + 4 + r->name().size(), 2), "  ") << r->name();
  }
}

TEST_F(Cli, TopLevelHelpListsEveryRoutine) {
  const std::string help = top_level_help(registry);
  for (const auto& r : registry.all()) EXPECT_NE(help.find(std::string(r->name())), std::string::npos) << r->name();
}

TEST_F(Cli, UsageErrorsNameTheProblemAndTheValue) {
  EXPECT_NE(usage_error("--routine rmsnorn --batch_size 1").find("unknown routine 'rmsnorn'"), std::string::npos);
  EXPECT_NE(usage_error("--routine rmsnorn --batch_size 1").find("did you mean: rmsnorm"), std::string::npos);
  EXPECT_NE(usage_error("--routine rmsnorm --batch_size 1 --hidden_size 8 --bogus 3").find("--bogus"), std::string::npos);
  EXPECT_NE(usage_error("--routine rmsnorm --hidden_size 8").find("missing required flag --batch_size"), std::string::npos);
  EXPECT_NE(usage_error("--routine rmsnorm --batch_size abc --hidden_size 8").find("'abc' is not an integer"), std::string::npos);
  EXPECT_NE(usage_error("--routine rmsnorm --batch_size 1 --hidden_size 8 --eps x").find("'x' is not a finite number"), std::string::npos);
  EXPECT_NE(usage_error("--routine rmsnorm --batch_size 1 --hidden_size 8 --input_dtype int8").find("invalid choice 'int8'"), std::string::npos);
  EXPECT_NE(usage_error("--routine rmsnorm --batch_size 1 --hidden_size 8 --backends nope").find("unknown backend 'nope'"), std::string::npos);
  EXPECT_NE(usage_error("--routine rmsnorm --batch_size 1 --hidden_size 8 -n 0").find("--num_iters"), std::string::npos);
  EXPECT_NE(usage_error("--routine rmsnorm --batch_size 1 --hidden_size 8 -d -1").find("--dry_run_iters"), std::string::npos);
  // Iteration counts beyond an int were cut to a small one (2^32 + 1 ran 1 iteration).
  EXPECT_NE(usage_error("--routine rmsnorm --batch_size 1 --hidden_size 8 -n 4294967297").find("--num_iters: must be in [1, 2147483647]"),
            std::string::npos);
  EXPECT_NE(usage_error("--routine rmsnorm --batch_size 1 --hidden_size 8 -n 3000000000").find("--num_iters"), std::string::npos);
  EXPECT_NE(usage_error("--routine rmsnorm --batch_size 1 --hidden_size 8 -d 3000000000").find("--dry_run_iters"), std::string::npos);
  // argparse's forms: a switch takes no value (CLI11 took --refcheck=false silently), a valued flag
  // needs one (CLI11 said "1 required  missing").
  EXPECT_NE(usage_error("--routine rmsnorm --batch_size 1 --hidden_size 8 --refcheck=false")
                .find("argument --refcheck: ignored explicit argument 'false'"),
            std::string::npos);
  EXPECT_NE(usage_error("--routine rmsnorm --batch_size 1 --hidden_size 8 --no_cuda_graph=0").find("--no_cuda_graph"),
            std::string::npos);
  EXPECT_NE(usage_error("--routine rmsnorm --batch_size 1 --hidden_size 8 --backends")
                .find("argument --backends: expected at least one argument"),
            std::string::npos);
  EXPECT_NE(usage_error("--routine rmsnorm --batch_size 1 --backends --hidden_size 8").find("--backends: expected"),
            std::string::npos);
  EXPECT_NE(usage_error("--routine rmsnorm --batch_size 1 --hidden_size 8 --case_tag").find("expected one argument"),
            std::string::npos);
  // Unrecognised arguments in the order given (CLI11 listed them reversed: "2 --alpha 1 --zeta").
  EXPECT_NE(usage_error("--routine rmsnorm --batch_size 1 --hidden_size 8 --zeta 1 --alpha 2")
                .find("unrecognized arguments: --zeta 1 --alpha 2 ("),
            std::string::npos);
  EXPECT_NE(usage_error("--batch_size 1").find("--routine is required"), std::string::npos);
  EXPECT_NE(usage_error("").find("no routine given"), std::string::npos);
  EXPECT_NE(usage_error("--routine").find("expects a value"), std::string::npos);
  EXPECT_NE(usage_error("--testlist t.txt --routine rmsnorm").find("cannot be combined"), std::string::npos);
  EXPECT_NE(usage_error("--testlist t.txt --batch_size 3").find("--batch_size"), std::string::npos);
}

TEST_F(Cli, IsolationFlags) {
  const CaseArgs a = parse("--routine rmsnorm --batch_size 1 --hidden_size 8 --isolate --case_timeout 2.5");
  EXPECT_TRUE(a.flag("isolate"));
  EXPECT_DOUBLE_EQ(a.real("case_timeout"), 2.5);
  EXPECT_NE(usage_error("--routine rmsnorm --batch_size 1 --hidden_size 8 --case_timeout 0").find("--case_timeout: must be positive"),
            std::string::npos);
  EXPECT_NE(usage_error("--routine rmsnorm --batch_size 1 --hidden_size 8 --case_timeout -1").find("--case_timeout: must be positive"),
            std::string::npos);
  // A child of --isolate is given the case without the isolation flags: unset forgets them.
  CaseArgs child = a;
  child.unset("isolate");
  child.unset("case_timeout");
  const auto words = case_words(child);
  EXPECT_EQ(std::count(words.begin(), words.end(), "--isolate"), 0);
  EXPECT_EQ(std::count(words.begin(), words.end(), "--case_timeout"), 0);
  EXPECT_EQ(parse_case(words, registry), parse("--routine rmsnorm --batch_size 1 --hidden_size 8"));
}

TEST_F(Cli, ReproCommandRoundTrips) {
  for (const std::string line : {
           "--routine rmsnorm_quant --batch_size 32 --hidden_size 4096 --input_dtype bfloat16 --out_dtype fp8_e4m3 "
           "--scale 1.0 --refcheck -vv --generate_repro_command --case_tag \"rmsnorm_quant_fp8_e4m3\"",
           "-R fused_add_rmsnorm --batch_size 3 --num_heads 5 --hidden_size 1000 --eps 1e-5 --case_tag \"a, b 'c'\" "
           "--backends cuda --enable_pdl --no_cuda_graph -n 3 -d 1 --output_path 'my results.csv'",
           "--routine gemma_rmsnorm --batch_size 1 --hidden_size 7 --random_seed 7 --use_cuda_events"}) {
    const CaseArgs original = parse(line);
    const std::string repro = repro_command(original);
    EXPECT_EQ(repro.rfind("kbench --routine ", 0), 0u) << repro;
    const auto words = split_shell_words(repro);
    const std::vector<std::string> args(words.begin() + 1, words.end());
    EXPECT_EQ(parse_case(args, registry), original) << repro;
  }
}

TEST_F(Cli, ReproCommandQuotesForTheShell) {
  const CaseArgs a = parse("--routine rmsnorm --batch_size 1 --hidden_size 8 --case_tag \"x y;rm -rf /\"");
  EXPECT_NE(repro_command(a).find("--case_tag 'x y;rm -rf /'"), std::string::npos) << repro_command(a);
}

TEST_F(Cli, OuterTestlistFlagsApplyToEveryLine) {
  const auto outer = parse_invocation(
      std::vector<std::string>{"--testlist", "t.txt", "--output_path", "all.csv", "--refcheck", "-v", "-n", "9"},
      registry).args;
  const CaseArgs line = parse("--routine rmsnorm --batch_size 1 --hidden_size 8 --output_path mine.csv -n 4");
  const CaseArgs merged = apply_outer_flags(line, outer);
  EXPECT_EQ(merged.text("output_path"), "all.csv");  // the outer path wins
  EXPECT_TRUE(merged.flag("refcheck"));
  EXPECT_EQ(merged.count("verbose"), 1);
  EXPECT_EQ(merged.integer("num_iters"), 4);  // the line's own value stays
  EXPECT_FALSE(merged.has("testlist"));
}

}  // namespace
}  // namespace kbench

namespace kbench {
namespace {

TEST_F(Cli, MeasurementAndRunFlags) {
  const CaseArgs a = parse("--routine rmsnorm --batch_size 1 --hidden_size 8 --max_noise 0.5 --min_time 0 --max_time 3 "
                           "--json r.json --json_samples");
  EXPECT_DOUBLE_EQ(a.real("max_noise"), 0.5);
  EXPECT_DOUBLE_EQ(a.real("min_time"), 0.0);
  EXPECT_DOUBLE_EQ(a.real("max_time"), 3.0);
  EXPECT_EQ(a.text("json"), "r.json");
  EXPECT_TRUE(a.flag("json_samples"));
  const CaseArgs defaults = parse("--routine rmsnorm --batch_size 1 --hidden_size 8");
  EXPECT_FALSE(defaults.has("max_noise"));
  EXPECT_DOUBLE_EQ(defaults.real("min_time"), 0.5);
  EXPECT_DOUBLE_EQ(defaults.real("max_time"), 15.0);
  const std::string base = "--routine rmsnorm --batch_size 1 --hidden_size 8 ";
  EXPECT_NE(usage_error(base + "--max_noise 0").find("--max_noise: must be positive"), std::string::npos);
  EXPECT_NE(usage_error(base + "--max_time -1").find("--max_time: must be positive"), std::string::npos);
  EXPECT_NE(usage_error(base + "--min_time -1").find("--min_time: must not be negative"), std::string::npos);
}

TEST_F(Cli, ShardsAreContiguousSlicesThatCoverTheRunOnce) {
  EXPECT_EQ(parse_shard("0/4"), (std::pair<std::size_t, std::size_t>{0, 4}));
  EXPECT_EQ(parse_shard("3/4"), (std::pair<std::size_t, std::size_t>{3, 4}));
  for (const char* bad : {"4/4", "1", "a/2", "-1/2", "1/0", "1/2/3", "/2", "1/", " 1/2"}) {
    EXPECT_THROW((void)parse_shard(bad), UsageError) << bad;
  }
  EXPECT_NE(usage_error("--testlist t.txt --shard 2/2").find("--shard: expected I/N with 0 <= I < N"), std::string::npos);
  for (std::size_t total : {0u, 1u, 7u, 139u, 1000u}) {
    for (std::size_t count : {1u, 2u, 3u, 8u, 200u}) {
      std::size_t next = 0;
      for (std::size_t index = 0; index < count; ++index) {
        const auto [first, last] = shard_range(total, {index, count});
        EXPECT_EQ(first, next) << total << " " << index << "/" << count;
        EXPECT_LE(last - first, total / count + 1);
        EXPECT_GE(last - first, total / count);
        next = last;
      }
      EXPECT_EQ(next, total);
    }
  }
}

TEST_F(Cli, GpuLists) {
  EXPECT_EQ(parse_gpu_list("0,1"), (std::vector<int>{0, 1}));
  EXPECT_EQ(parse_gpu_list("3"), (std::vector<int>{3}));
  for (const char* bad : {"", "0,", ",1", "0,0", "a", "-1", "0;1", "1.5"}) {
    EXPECT_THROW((void)parse_gpu_list(bad), UsageError) << bad;
  }
  EXPECT_NE(usage_error("--testlist t.txt --gpus 0,0").find("--gpus: GPU 0 is named twice"), std::string::npos);
  EXPECT_NE(usage_error("--routine rmsnorm --batch_size 1 --hidden_size 8 --gpus all --baseline cuda --backends cuda flashinfer "
                        "--baseline_csv x.csv")
                .find("--baseline_csv cannot be combined with --gpus"),
            std::string::npos);
}

}  // namespace
}  // namespace kbench
