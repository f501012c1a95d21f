#include "core/routine.hpp"

#include <algorithm>

namespace kbench {

int64_t positive_integer(const CaseArgs& args, const char* flag) {
  const int64_t v = args.integer(flag);
  if (v <= 0) throw CaseError(std::string("--") + flag + " must be positive, got " + std::to_string(v));
  return v;
}

std::vector<Comparison> Case::compare(const std::vector<CheckedOutput>& outputs,
                                      const std::vector<std::vector<float>>& expected,
                                      const std::vector<std::vector<float>>& got) const {
  std::vector<Comparison> comparisons;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const CheckedOutput& out = outputs[i];
    comparisons.push_back(is_fp8(out.dtype) ? compare_quantized(out.name, expected[i], got[i], out.tolerance, out.dtype)
                                            : compare_isclose(out.name, expected[i], got[i], out.tolerance));
  }
  return comparisons;
}

std::string Routine::csv_column(const FlagSpec& flag) const {
  for (const auto& [name, column] : renamed_flag_columns()) {
    if (name == flag.name) return column;
  }
  return flag.name;
}

const Backend* Routine::find_backend(std::string_view name) const {
  for (const auto& backend : backends_) {
    if (backend->name() == name) return backend.get();
    const auto& aliases = backend->info().aliases;
    if (std::any_of(aliases.begin(), aliases.end(), [&](const BackendAlias& a) { return a.name == name; })) {
      return backend.get();
    }
  }
  return nullptr;
}

void Routine::add_backend(std::unique_ptr<Backend> backend) {
  if (backend->name() == "auto" || find_backend(backend->name()) != nullptr) {
    throw std::logic_error("routine " + std::string(name()) + ": backend name " + std::string(backend->name()) +
                           " taken twice");
  }
  backends_.push_back(std::move(backend));
}

}  // namespace kbench
