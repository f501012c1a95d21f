// Backends as objects: names, aliases, `auto`, a vendor library that is absent, the names
// --backends accepts, and the generated support matrix the README must show.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "core/backend.hpp"
#include "core/cli.hpp"
#include "core/shell_words.hpp"
#include "core/routine.hpp"
#include "core/support_matrix.hpp"
#include "routines/builtin_routines.hpp"
#include "routines/vendor_libraries.hpp"
#include "run_command.hpp"

namespace kbench {
namespace {

struct PresentLibrary {
  static constexpr bool built = true;
  static constexpr std::string_view absent_reason = "";
};
struct MissingLibrary {
  static constexpr bool built = false;
  static constexpr std::string_view absent_reason = "kbench was built without Example (configure with X=ON)";
};

class ExampleBackend final : public Backend {
 public:
  explicit ExampleBackend(BackendInfo info) : Backend(std::move(info)) {}
  [[nodiscard]] Support can_run_on(const DeviceInfo&) const override { return Support::yes(); }
  [[nodiscard]] Support can_implement(const Case&) const override { return Support::yes(); }
  [[nodiscard]] std::unique_ptr<Operation> prepare(Case&, cudaStream_t) const override { return nullptr; }
};

// Only declared: a library absent from the build leaves its backends' code out, and
// vendor_backend never instantiates them.
class NeverDefinedBackend;

DeviceInfo hopper() {
  DeviceInfo d;
  d.cc_major = 9;
  return d;
}

TEST(Backends, AnAbsentLibraryGivesItsOneReasonAndNeedsNoCode) {
  const auto absent = vendor_backend<NeverDefinedBackend, MissingLibrary>({"example", "Example", "sm_90a"});
  EXPECT_EQ(absent->name(), "example");
  const Support support = absent->can_run_on(hopper());
  EXPECT_FALSE(support.supported);
  EXPECT_EQ(support.reason, MissingLibrary::absent_reason);
  const auto present = vendor_backend<ExampleBackend, PresentLibrary>({"example", "Example", "sm_90a"});
  EXPECT_TRUE(present->can_run_on(hopper()).supported);
}

TEST(Backends, EveryBuiltinBackendOfAMissingLibraryNamesTheLibrary) {
  const RoutineRegistry registry = make_builtin_registry();
  int flashinfer_backends = 0;
  for (const auto& routine : registry.all()) {
    for (const auto& backend : routine->backends()) {
      if (backend->info().provider != "FlashInfer") continue;
      ++flashinfer_backends;
      const Support support = backend->can_run_on(hopper());
      if (!FlashinferLibrary::built) {
        EXPECT_FALSE(support.supported) << routine->name() << " " << backend->name();
        EXPECT_NE(support.reason.find("without FlashInfer"), std::string::npos) << support.reason;
        EXPECT_NE(support.reason.find("KBENCH_WITH_FLASHINFER"), std::string::npos) << support.reason;
      }
    }
  }
  // rmsnorm and its nine variants (the FP4 norms and fused_rmsnorm_silu refuse with a reason), decode
  // (two paths), both prefills (two paths each), MLA decode (two kernels), the 15 sampling routines, the
  // three FP8 RoPE routines.
  EXPECT_EQ(flashinfer_backends, 10 + 2 + 2 * 2 + 2 + 15 + 3);
}

TEST(Backends, AcceptedNamesComeFromTheBackendObjects) {
  const RoutineRegistry registry = make_builtin_registry();
  const std::vector<std::string> names = registry.accepted_backend_names();
  auto accepted = [&](std::string_view n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  for (const char* name : {"fa2", "fa2_tc", "fa3", "cudnn", "cudnn-native", "cuda", "auto", "flashinfer",
                           "flashinfer_fa2", "flashinfer_fa2_tc", "flashinfer_fa3", "cutlass", "trtllm-gen"}) {
    EXPECT_TRUE(accepted(name)) << name;
  }
  EXPECT_FALSE(accepted("fa4"));
  const auto r = testing::run_kbench("--routine rmsnorm --batch_size 1 --hidden_size 64 --backends fa4");
  EXPECT_EQ(r.exit_status, 2) << r.output;
  EXPECT_NE(r.output.find("unknown backend 'fa4'"), std::string::npos) << r.output;
}

TEST(Backends, AutoPicksByTheRoutinesRule) {
  const RoutineRegistry registry = make_builtin_registry();
  const Routine& decode = *registry.find("BatchDecodeWithPagedKVCacheWrapper");
  auto decode_case = [&](const char* heads) {
    const std::vector<std::string> words =
        split_shell_words("--routine BatchDecodeWithPagedKVCacheWrapper --batch_size 2 --s_kv 64 --head_dim_qk 128 "
                          "--head_dim_vo 128 --page_size 16 " + std::string(heads));
    return decode.make_case(parse_case(words, registry));
  };
  // fa2_tc first at every GQA ratio (the attention grid found it faster at GQA 1 too).
  EXPECT_EQ(decode.auto_candidates(*decode_case("--num_qo_heads 32 --num_kv_heads 8")),
            (std::vector<std::string>{"fa2_tc", "fa2"}));
  EXPECT_EQ(decode.auto_candidates(*decode_case("--num_qo_heads 8 --num_kv_heads 8")),
            (std::vector<std::string>{"fa2_tc", "fa2"}));
  EXPECT_FALSE(registry.find("rmsnorm")->has_auto());
}

std::string readme_matrix() {
  std::ifstream in(std::string(KBENCH_SOURCE_DIR) + "/README.md");
  std::stringstream all;
  all << in.rdbuf();
  const std::string text = all.str();
  const std::string begin = "<!-- support-matrix: kbench --list --format markdown -->\n";
  const std::string end = "<!-- support-matrix end -->";
  const auto b = text.find(begin);
  const auto e = text.find(end);
  if (b == std::string::npos || e == std::string::npos || e < b) return "(README.md has no support-matrix markers)";
  return text.substr(b + begin.size(), e - b - begin.size());
}

TEST(SupportMatrix, ReadmeShowsTheGeneratedMatrix) {
  const auto r = testing::run_kbench("--list --format markdown");
  ASSERT_EQ(r.exit_status, 0) << r.output;
  EXPECT_EQ(readme_matrix(), r.output) << "regenerate the README's table with: kbench --list --format markdown";
  EXPECT_EQ(r.output, support_matrix_markdown(make_builtin_registry()));
}

TEST(SupportMatrix, ListFormatIsChecked) {
  const auto r = testing::run_kbench("--list --format html");
  EXPECT_EQ(r.exit_status, 2) << r.output;
  EXPECT_NE(r.output.find("invalid choice 'html'"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace kbench
