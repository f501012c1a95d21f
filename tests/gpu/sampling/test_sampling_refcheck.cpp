// The sampling family on a GPU: every routine x every backend that runs here (cuda, cub, flashinfer
// where built) passes kbench's refcheck on batches of 1 and 37, vocabularies that are multiples of
// nothing (1000, 50257) and the large ones of the issue, float32 / float16 / bfloat16 inputs, both
// input laws; samplers also write the same ids twice (the refcheck's repeated call). Paths with
// their own code are named: the top-k fallback (k above the block's threads, rows of ties), rows
// spread over 16 CTAs, transforms with fewer rows than the page table, chain with 1 and 8 tokens.
// Finally the reference's sample lines, unchanged, through the kbench binary with --refcheck.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/verify.hpp"
#include "gpu_test_support.hpp"
#include "kbench/cuda_stream.hpp"
#include "run_command.hpp"
#include "sampling_test_support.hpp"

namespace kbench {
namespace {

using testing::make_sampling_case;

struct Line {
  std::string text;
  std::vector<std::string> dtypes;  // input dtypes to run it with ({""}: the routine takes none)
};

// Every routine with its own flags; crossed below with batch, vocabulary and law.
const std::vector<Line>& routine_lines() {
  static const std::vector<std::string> all_dtypes = {"float32", "float16", "bfloat16"};
  static const std::vector<Line> lines = {
      {"--routine softmax --temperature 0.8", all_dtypes},
      {"--routine sampling_from_probs", {""}},
      {"--routine sampling_from_logits", all_dtypes},
      {"--routine top_k_sampling_from_probs --top_k 50", {""}},
      {"--routine top_p_sampling_from_probs --top_p 0.9", {""}},
      {"--routine top_k_top_p_sampling_from_probs --top_k 50 --top_p 0.9 --filter_apply_order top_k_first", {""}},
      {"--routine top_k_top_p_sampling_from_probs --top_k 50 --top_p 0.9 --filter_apply_order joint", {""}},
      {"--routine top_k_top_p_sampling_from_logits --top_k 50 --top_p 0.9 --filter_apply_order top_k_first", all_dtypes},
      {"--routine top_k_top_p_sampling_from_logits --top_k 50 --top_p 0.9 --filter_apply_order joint", all_dtypes},
      {"--routine min_p_sampling_from_probs --min_p 0.1", {""}},
      {"--routine top_k_renorm_probs --top_k 50", all_dtypes},
      {"--routine top_p_renorm_probs --top_p 0.9", {""}},
      {"--routine top_k_mask_logits --top_k 50", all_dtypes},
      {"--routine chain_speculative_sampling --num_speculate_tokens 5", {""}},
      {"--routine top_k --top_k 100", all_dtypes},
  };
  return lines;
}

// Runs the refcheck of every backend of `line` that runs here; expects each to pass.
void expect_all_backends_pass(const std::string& line, cudaStream_t stream) {
  SCOPED_TRACE(line);
  const Routine& routine = testing::routine_of(line);
  const auto problem = make_sampling_case(line, stream);
  Verifier verifier(*problem);
  for (const Backend* backend : testing::runnable_backends(routine)) {
    SCOPED_TRACE(std::string(backend->name()));
    const Support support = backend->can_implement(*problem);
    if (!support) {
      ADD_FAILURE() << backend->name() << " does not take the case: " << support.reason;
      continue;
    }
    const auto operation = backend->prepare(*problem, stream);
    const RefcheckResult result = verifier.check(*operation, stream);
    EXPECT_TRUE(result.passed()) << testing::describe_failures(result);
  }
}

// Every routine line crossed with batch (1, 37), vocabulary (1000, 50257), law and dtype; the
// transforms on their own shapes; then the shapes (rows over 8 to 16 CTAs of a cluster,
// FlashInfer's top_k_first fast path) and the paths of their own: k above the block's threads (the
// top-k fallback: a radix select over the whole row), bfloat16 peaked logits (ties at the k-th
// value), k = 1, the two-pass top_k of full batches, chain with 1 and 8 tokens. One test per line (each well inside ctest's timeout).
std::vector<std::string> all_lines() {
  std::vector<std::string> lines;
  for (const Line& l : routine_lines()) {
    for (const char* shape : {"--batch_size 1 --vocab_size 1000", "--batch_size 37 --vocab_size 50257"}) {
      for (const char* law : {"flat", "peaked"}) {
        for (const std::string& dtype : l.dtypes) {
          lines.push_back(l.text + " " + shape + " --distribution " + law +
                          (dtype.empty() ? std::string() : " --input_dtype " + dtype));
        }
      }
    }
  }
  for (const char* routine : {"top_k_page_table_transform", "top_k_ragged_transform"}) {
    for (const char* dtype : {"float32", "float16", "bfloat16"}) {
      for (const char* shape : {"--batch_size 1 --max_len 4096 --top_k 64", "--batch_size 37 --max_len 1000 --top_k 64",
                                "--batch_size 16 --num_rows 5 --max_len 20000 --top_k 256"}) {
        lines.push_back(std::string("--routine ") + routine + " " + shape + " --input_dtype " + dtype);
      }
    }
  }
  for (const char* line : {
           "--routine top_p_sampling_from_probs --batch_size 3 --vocab_size 128256 --top_p 0.9",
           "--routine top_p_sampling_from_probs --batch_size 2 --vocab_size 128256 --top_p 0.9 --distribution peaked",
           "--routine top_k_top_p_sampling_from_probs --batch_size 3 --vocab_size 128256 --top_k 50 --top_p 0.9",
           "--routine top_k_top_p_sampling_from_logits --batch_size 3 --vocab_size 151936 --top_k 50 --top_p 0.9 "
           "--input_dtype bfloat16 --distribution peaked",
           "--routine top_k --batch_size 2 --vocab_size 262144 --top_k 256",
           // The two-pass top_k (rows x chunks fill the GPU): k 256; an odd length with a short last
           // chunk and k 500 (chunks over capacity take their exact top k); peaked bfloat16 (ties).
           "--routine top_k --batch_size 40 --vocab_size 262144 --top_k 256",
           "--routine top_k --batch_size 70 --vocab_size 200003 --top_k 500",
           "--routine top_k --batch_size 300 --vocab_size 65537 --top_k 1 --input_dtype bfloat16 --distribution peaked",
           "--routine top_k --batch_size 130 --vocab_size 100000 --top_k 64 --input_dtype float16 --distribution peaked",
           // The two-pass samplers: top-k with top-p (probabilities, logits), a k near the threads,
           // peaked bfloat16 logits (ties; with k 500 chunks whose ties overflow their part).
           "--routine top_k_top_p_sampling_from_probs --batch_size 64 --vocab_size 128256 --top_k 50 --top_p 0.9",
           "--routine top_k_sampling_from_probs --batch_size 100 --vocab_size 50257 --top_k 300",
           "--routine top_k_top_p_sampling_from_logits --batch_size 60 --vocab_size 151936 --top_k 50 --top_p 0.9 "
           "--input_dtype bfloat16 --distribution peaked",
           "--routine top_k_top_p_sampling_from_logits --batch_size 60 --vocab_size 151936 --top_k 500 --top_p 0.95 "
           "--input_dtype bfloat16 --distribution peaked",
           // Softmax of batches that fill the GPU (the plan's cluster size from the occupancy
           // calculator): rows not 16-byte aligned (fp32 50257), 16-bit inputs, one-CTA clusters.
           "--routine softmax --batch_size 300 --vocab_size 50257 --temperature 0.8",
           "--routine softmax --batch_size 200 --vocab_size 128256 --input_dtype float16",
           "--routine softmax --batch_size 3000 --vocab_size 1001 --input_dtype bfloat16",
           "--routine top_k --batch_size 5 --vocab_size 50257 --top_k 600",
           "--routine top_k --batch_size 3 --vocab_size 4097 --top_k 1",
           "--routine top_k_mask_logits --batch_size 9 --vocab_size 32000 --top_k 50 --input_dtype bfloat16 "
           "--distribution peaked",
           "--routine top_k_renorm_probs --batch_size 9 --vocab_size 32000 --top_k 600 --input_dtype float16",
           "--routine top_k_sampling_from_probs --batch_size 4 --vocab_size 50257 --top_k 1000",
           "--routine softmax --batch_size 2 --vocab_size 262144 --input_dtype bfloat16",
           "--routine top_p_renorm_probs --batch_size 3 --vocab_size 128256 --top_p 0.95 --distribution peaked",
           "--routine chain_speculative_sampling --batch_size 7 --vocab_size 32000 --num_speculate_tokens 1",
           "--routine chain_speculative_sampling --batch_size 5 --vocab_size 128256 --num_speculate_tokens 8 "
           "--distribution peaked",
       }) {
    lines.emplace_back(line);
  }
  return lines;
}

class SamplingRefcheck : public ::testing::TestWithParam<std::string> {};

TEST_P(SamplingRefcheck, EveryBackendPasses) {
  KBENCH_REQUIRE_GPU();
  CudaStream stream;
  expect_all_backends_pass(GetParam(), stream.get());
}

INSTANTIATE_TEST_SUITE_P(Lines, SamplingRefcheck, ::testing::ValuesIn(all_lines()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           // "top_k_mask_logits_7": the routine and the line's place in the list.
                           const std::string& line = info.param;
                           const auto from = line.find("--routine ") + 10;
                           return line.substr(from, line.find(' ', from) - from) + "_" + std::to_string(info.index);
                         });

// The reference's sampling lines (flashinfer_sample_testlist.txt), every backend, through the binary.
TEST(SamplingEndToEnd, TheReferenceSampleLinesPass) {
  KBENCH_REQUIRE_GPU();
  const auto r = testing::run_kbench("--testlist " + std::string(KBENCH_SOURCE_DIR) +
                                     "/bench/sampling/reference_samples.txt --refcheck --backends cuda cub flashinfer "
                                     "-n 3 -d 1");
  EXPECT_EQ(r.exit_status, 0) << r.output;
  EXPECT_EQ(r.output.find("[ERROR]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" 0 incorrect, "), std::string::npos) << r.output;
}

}  // namespace
}  // namespace kbench
