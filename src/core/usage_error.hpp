// Errors in what the user asked for (unknown flag, bad value, unreadable file). The command line
// reports them with exit status 2; inside a testlist they fail that line and the run goes on.
#pragma once

#include <stdexcept>

namespace kbench {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace kbench
