#include "core/backend.hpp"

#include <stdexcept>

namespace kbench {

std::unique_ptr<Operation> AbsentBackend::prepare(Case&, cudaStream_t) const {
  throw std::logic_error("backend " + std::string(name()) + " prepared although it is absent: " + reason_);
}

}  // namespace kbench
