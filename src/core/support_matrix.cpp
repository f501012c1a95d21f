#include "core/support_matrix.hpp"

#include <algorithm>
#include <sstream>

namespace kbench {
namespace {

// A routine that parses and validates its cases but has no backend of kbench's: its lines are
// skipped with the reference's warning.
constexpr const char* kNoBackendYet = "none yet: its lines are skipped";

std::string padded(std::string s, std::size_t width) {
  s.resize(std::max(width, s.size() + 1), ' ');
  return s;
}

std::string names_with_aliases(const Backend& backend) {
  std::string s = "`";
  s.append(backend.name()).append("`");
  for (const BackendAlias& alias : backend.info().aliases) s.append(" (`").append(alias.name).append("`)");
  return s;
}

}  // namespace

void print_support_on_device(const RoutineRegistry& registry, const std::optional<DeviceInfo>& device,
                             const std::string& why_no_device, std::ostream& out) {
  if (device) {
    out << "kbench " << KBENCH_VERSION << " on " << device->name << " (compute capability "
        << device->compute_capability() << ", " << device->sm_count << " SMs, " << device->l2_bytes / (1024 * 1024)
        << " MiB L2)\n";
  } else {
    out << "kbench " << KBENCH_VERSION << ": no CUDA device present (" << why_no_device
        << "); every backend needs one.\n";
  }
  std::size_t width = std::string_view("routine").size();
  std::size_t backend_width = std::string_view("backend").size();
  for (const auto& routine : registry.all()) {
    width = std::max(width, routine->name().size());
    for (const auto& backend : routine->backends()) backend_width = std::max(backend_width, backend->name().size());
  }
  backend_width += 2;
  out << padded("routine", width + 2) << padded("backend", backend_width) << padded("kernels", 12) << "status\n";
  for (const auto& routine : registry.all()) {
    for (const auto& backend : routine->backends()) {
      std::string status = "skipped: no CUDA device";
      if (device) {
        const Support support = backend->can_run_on(*device);
        status = support ? "runs" : "skipped: " + support.reason;
      }
      out << padded(std::string(routine->name()), width + 2) << padded(std::string(backend->name()), backend_width)
          << padded(backend->info().provider, 12) << status << "\n";
    }
    if (routine->backends().empty()) {
      out << padded(std::string(routine->name()), width + 2) << padded("-", backend_width) << padded("", 12)
          << kNoBackendYet << "\n";
    }
    if (routine->has_auto()) {
      out << padded(std::string(routine->name()), width + 2) << padded("auto", backend_width) << padded("", 12) << "picks "
          << routine->auto_rule() << "\n";
    }
  }
}

std::string support_matrix_markdown(const RoutineRegistry& registry) {
  std::ostringstream out;
  out << "| family | routine | backend | kernels | GPUs |\n|---|---|---|---|---|\n";
  for (const auto& routine : registry.all()) {
    const std::string head = "| " + std::string(routine->family()) + " | `" + std::string(routine->name()) + "` | ";
    for (const auto& backend : routine->backends()) {
      out << head << names_with_aliases(*backend) << " | " << backend->info().provider << " | "
          << backend->info().gpus << " |\n";
    }
    if (routine->has_auto()) out << head << "`auto` | picks " << routine->auto_rule() << " | |\n";
    if (routine->backends().empty()) out << head << "- | " << kNoBackendYet << " | |\n";
  }
  return out.str();
}

}  // namespace kbench
