// kbench: FlashInfer's flashinfer_benchmark.py command lines, in C++, on kbench's own kernels.
//
// A multi-GPU run is one process per GPU: started by mpirun / srun (the launcher's variables give
// each its rank) or by `kbench --nproc N`, which starts the N processes itself. Every rank runs the
// same cases in step; rank 0 prints the results and writes the CSV, the others report only their
// errors (on stderr, marked with their rank).
#include <iostream>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "core/child_process.hpp"
#include "core/compare.hpp"
#include "core/rank_group.hpp"
#include "core/runner.hpp"
#include "dist/launcher.hpp"
#include "dist/rank_environment.hpp"
#include "dist/rendezvous.hpp"
#include "dist/world.hpp"
#include "routines/builtin_routines.hpp"

namespace {

// Removes `--name V` / `--name=V` from `tokens` and returns V.
std::optional<std::string> take_flag(std::vector<std::string>& tokens, const std::string& name) {
  std::optional<std::string> value;
  for (std::size_t i = 0; i < tokens.size();) {
    if (tokens[i] == "--" + name && i + 1 < tokens.size()) {
      value = tokens[i + 1];
      tokens.erase(tokens.begin() + static_cast<std::ptrdiff_t>(i), tokens.begin() + static_cast<std::ptrdiff_t>(i) + 2);
    } else if (tokens[i].rfind("--" + name + "=", 0) == 0) {
      value = tokens[i].substr(name.size() + 3);
      tokens.erase(tokens.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  return value;
}

// A rank other than 0: its output is dropped except the [ERROR] lines, which go to stderr as
// "[rank R] [ERROR] ...".
class RankErrorsBuffer final : public std::stringbuf {
 public:
  explicit RankErrorsBuffer(int rank) : prefix_("[rank " + std::to_string(rank) + "] ") {}
  ~RankErrorsBuffer() override { (void)sync(); }

 protected:
  int sync() override {
    std::string text = str();
    std::size_t start = 0;
    for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
      const std::string line = text.substr(start, end - start);
      if (line.rfind("[ERROR]", 0) == 0) std::cerr << prefix_ << line << '\n' << std::flush;
    }
    str(text.substr(start));
    return 0;
  }

 private:
  std::string prefix_;
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> tokens(argv + 1, argv + argc);
  if (!tokens.empty() && tokens.front() == "compare") {
    return kbench::compare_main(std::span(tokens).subspan(1), std::cout);
  }
  kbench::dist::RankEnvironment ranks;
  try {
    ranks = kbench::dist::discover_ranks(kbench::dist::process_getenv);
  } catch (const std::exception& e) {
    std::cerr << "[ERROR] " << e.what() << std::endl;
    return kbench::kExitUsage;
  }
  if (const std::optional<std::string> nproc = take_flag(tokens, "nproc")) {
    if (ranks.size > 1) {
      std::cerr << "[ERROR] --nproc starts the ranks itself: not under " << ranks.launcher << " (which started "
                << ranks.size << ")" << std::endl;
      return kbench::kExitUsage;
    }
    int count = 0;
    try {
      count = std::stoi(*nproc);
    } catch (const std::exception&) {
      std::cerr << "[ERROR] --nproc " << *nproc << " is not a number of processes" << std::endl;
      return kbench::kExitUsage;
    }
    return kbench::dist::launch_local(count, kbench::self_executable(), tokens, std::cerr);
  }

  std::unique_ptr<kbench::dist::World> world;
  std::unique_ptr<RankErrorsBuffer> rank_errors;
  std::unique_ptr<std::ostream> rank_out;
  std::ostream* out = &std::cout;
  if (ranks.size > 1) {
    try {
      world = kbench::dist::World::create(ranks, kbench::dist::rendezvous_options(ranks, kbench::dist::process_getenv),
                                          kbench::dist::command_digest(tokens));
    } catch (const std::exception& e) {
      std::cerr << "[ERROR] rank " << ranks.rank << ": " << e.what() << std::endl;
      return kbench::kExitCaseFailed;
    }
    kbench::set_rank_group(world.get());
    if (ranks.rank != 0) {
      // One CSV and one JSON file per run: rank 0's.
      (void)take_flag(tokens, "output_path");
      (void)take_flag(tokens, "json");
      rank_errors = std::make_unique<RankErrorsBuffer>(ranks.rank);
      rank_out = std::make_unique<std::ostream>(rank_errors.get());
      out = rank_out.get();
    }
  }
  const int status = kbench::kbench_main(tokens, kbench::make_builtin_registry(), *out);
  out->flush();
  kbench::set_rank_group(nullptr);
  return status;
}
