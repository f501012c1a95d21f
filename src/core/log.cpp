#include "core/log.hpp"

#include <charconv>
#include <cmath>
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

namespace {

template <class Float>
std::string shortest_repr(Float value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, end);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

}  // namespace

std::string python_float(double value) { return shortest_repr(value); }
std::string python_float(float value) { return shortest_repr(value); }

void Log::line(std::string_view tag, std::string_view message) const {
  *out_ << tag << message << '\n';
  out_->flush();
}

}  // namespace kbench
