// Fuzzes what a testlist line goes through before anything touches a GPU: shell-word splitting,
// flag parsing, sweep expansion, the routine's validation and the case's formulas and tensor
// descriptions. Lines are taken from a corpus (files of testlist lines) and mutated by a seeded
// PRNG: words dropped, doubled or swapped, numbers replaced by extremes, flags and values spliced
// from other lines, bytes flipped. Every error must come out as one of kbench's own (UsageError,
// CaseError, RoutineNotBuilt); anything else, a crash, or (under ASan/UBSan, as CI builds it) a
// memory or undefined-behaviour error fails the run.
//   kbench_fuzz_testlist_lines [--seconds S] [--iterations N] [--seed X] CORPUS_FILE...
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/check.hpp"
#include "core/cli.hpp"
#include "core/routine.hpp"
#include "core/shell_words.hpp"
#include "core/usage_error.hpp"
#include "routines/builtin_routines.hpp"

namespace {

using kbench::CaseArgs;

const char* const kExtremes[] = {"0", "-1", "1", "2147483647", "2147483648", "-2147483648", "4294967297",
                                 "9223372036854775807", "99999999999999999999", "1e-310", "1e39", "-0", "nan",
                                 "inf", "0x10", "3.5", "65536", "1073741824", "", "'", "\"", "\\", "$x"};

std::vector<std::string> read_corpus(const std::vector<std::string>& files) {
  std::vector<std::string> lines;
  for (const std::string& f : files) {
    std::ifstream in(f);
    for (std::string line; std::getline(in, line);) {
      if (line.find("--routine") != std::string::npos || line.find("-R ") != std::string::npos) lines.push_back(line);
    }
  }
  return lines;
}

std::string mutate(const std::string& line, const std::vector<std::string>& corpus, std::mt19937_64& rng) {
  std::vector<std::string> words;
  try {
    words = kbench::split_shell_words(line);
  } catch (const kbench::UsageError&) {
    words = {line};
  }
  const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % std::max<std::size_t>(n, 1)); };
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !words.empty(); ++e) {
    const std::size_t i = pick(words.size());
    switch (rng() % 7) {
      case 0: words.erase(words.begin() + static_cast<std::ptrdiff_t>(i)); break;
      case 1: words.insert(words.begin() + static_cast<std::ptrdiff_t>(i), words[i]); break;
      case 2: std::swap(words[i], words[pick(words.size())]); break;
      case 3: words[i] = kExtremes[pick(std::size(kExtremes))]; break;
      case 4: {  // a word from another line
        std::vector<std::string> other;
        try {
          other = kbench::split_shell_words(corpus[pick(corpus.size())]);
        } catch (const kbench::UsageError&) {
        }
        if (!other.empty()) words.insert(words.begin() + static_cast<std::ptrdiff_t>(i), other[pick(other.size())]);
        break;
      }
      case 5:  // several values: a sweep
        for (int k = static_cast<int>(rng() % 5); k > 0; --k) {
          words.insert(words.begin() + static_cast<std::ptrdiff_t>(i) + 1, std::to_string(rng() % 5000));
        }
        break;
      default:
        if (!words[i].empty()) words[i][pick(words[i].size())] = static_cast<char>(32 + rng() % 95);
        break;
    }
  }
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + kbench::shell_quote(w);
  // Sometimes the raw text, unquoted, so the splitter sees odd quoting too.
  if (rng() % 8 == 0) {
    out.clear();
    for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  }
  return out;
}

// One line through everything a GPU-less run does with it. Returns false on an unexpected error.
bool exercise(const std::string& line, const kbench::RoutineRegistry& registry) {
  try {
    const CaseArgs args = kbench::parse_case(kbench::split_shell_words(line), registry);
    const kbench::Routine& routine = *registry.find(args.routine());
    if (!kbench::names_a_kbench_backend(routine, args)) return true;
    const std::vector<CaseArgs> sweep = kbench::expand_sweep(args);
    for (std::size_t i = 0; i < sweep.size() && i < 64; ++i) {
      try {
        const auto problem = routine.make_case(sweep[i]);
        volatile double sink = problem->flops() + problem->bytes() + static_cast<double>(problem->bytes_per_copy()) +
                               static_cast<double>(problem->reference_bytes());
        (void)sink;
        (void)problem->tensors();
        (void)problem->result_columns();
      } catch (const kbench::CaseError&) {
      }
    }
    (void)kbench::repro_command(args);
  } catch (const kbench::UsageError&) {
  } catch (const kbench::RoutineNotBuilt&) {
  } catch (const kbench::CaseError&) {
  } catch (const std::exception& e) {
    std::printf("UNEXPECTED %s on: %s\n", e.what(), line.c_str());
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 20;
  long iterations = -1;
  uint64_t seed = 1;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (a == "--iterations" && i + 1 < argc) {
      iterations = std::atol(argv[++i]);
    } else if (a == "--seed" && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else {
      files.push_back(a);
    }
  }
  const std::vector<std::string> corpus = read_corpus(files);
  if (corpus.empty()) {
    std::printf("no corpus lines in the files given\n");
    return 2;
  }
  const kbench::RoutineRegistry registry = kbench::make_builtin_registry();
  std::mt19937_64 rng(seed);
  const auto start = std::chrono::steady_clock::now();
  long done = 0, failed = 0;
  for (const std::string& line : corpus) failed += exercise(line, registry) ? 0 : 1;  // the corpus itself
  while (iterations < 0 || done < iterations) {
    if (iterations < 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > seconds) break;
    std::string line = corpus[rng() % corpus.size()];
    for (int depth = static_cast<int>(rng() % 3); depth >= 0; --depth) line = mutate(line, corpus, rng);
    failed += exercise(line, registry) ? 0 : 1;
    ++done;
  }
  std::printf("fuzz: %zu corpus lines, %ld mutated lines, seed %llu: %ld unexpected errors\n", corpus.size(), done,
              static_cast<unsigned long long>(seed), failed);
  return failed == 0 ? 0 : 1;
}
