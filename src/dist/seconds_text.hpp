// Seconds as the error messages write them: "120", "0.5", "2.25".
#pragma once

#include <sstream>
#include <string>

namespace kbench::dist {

[[nodiscard]] inline std::string seconds_text(double seconds) {
  std::ostringstream text;
  text << seconds;
  return text.str();
}

}  // namespace kbench::dist
