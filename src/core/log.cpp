#include "core/log.hpp"

#include <cstdio>

namespace kbench {

std::string format_perf_line(std::string_view backend, double median_ms, double std_ms, double tflops,
                             double tb_per_sec) {
  std::string name(backend);
  if (name.size() < 15) name.resize(15, ' ');
  char numbers[256];
  std::snprintf(numbers, sizeof numbers,
                ":: median time %.3f ms; std %.3f ms; achieved tflops %.3f TFLOPs/sec; achieved tb_per_sec %.3f TB/sec",
                median_ms, std_ms, tflops, tb_per_sec);
  return "[PERF] " + name + numbers;
}

void Log::line(std::string_view tag, std::string_view message) const {
  *out_ << tag << message << '\n';
  out_->flush();
}

}  // namespace kbench
