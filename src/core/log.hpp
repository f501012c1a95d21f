// The reference tool's console output: [INFO], [VERBOSE], [VVERBOSE], [WARNING], [ERROR] and the
// [PERF] line, byte for byte. Everything goes to one stream, flushed per line so a crash loses
// nothing already printed.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

namespace kbench {

// "[PERF] <backend padded to 15>:: median time X.XXX ms; std X.XXX ms; achieved tflops X.XXX
// TFLOPs/sec; achieved tb_per_sec X.XXX TB/sec" (a backend longer than 15 is not cut).
[[nodiscard]] std::string format_perf_line(std::string_view backend, double median_ms, double std_ms,
                                           double tflops, double tb_per_sec);

// A float as Python's repr() writes it (shortest round trip, "1.0" not "1"), for [VVERBOSE] lines.
// A float prints its own shortest form (1e-06f is "1e-06", not 9.99999997e-07).
[[nodiscard]] std::string python_float(double value);
[[nodiscard]] std::string python_float(float value);

class Log {
 public:
  explicit Log(std::ostream& out, int verbosity = 0) : out_(&out), verbosity_(verbosity) {}

  [[nodiscard]] int verbosity() const noexcept { return verbosity_; }
  void set_verbosity(int verbosity) noexcept { verbosity_ = verbosity; }

  void info(std::string_view message) const { line("[INFO] ", message); }
  // [INFO] lines the reference prints only at -v (args, "Running test...", version).
  void info_v(std::string_view message) const {
    if (verbosity_ >= 1) line("[INFO] ", message);
  }
  void verbose(std::string_view message) const {
    if (verbosity_ >= 1) line("[VERBOSE] ", message);
  }
  void vverbose(std::string_view message) const {
    if (verbosity_ >= 2) line("[VVERBOSE] ", message);
  }
  void warning(std::string_view message) const { line("[WARNING] ", message); }
  void error(std::string_view message) const { line("[ERROR] ", message); }
  void perf(std::string_view backend, double median_ms, double std_ms, double tflops, double tb_per_sec) const {
    line("", format_perf_line(backend, median_ms, std_ms, tflops, tb_per_sec));
  }

 private:
  void line(std::string_view tag, std::string_view message) const;
  std::ostream* out_;
  int verbosity_;
};

}  // namespace kbench
