// The seam between the harness and the routine families. The harness (CLI, timing, CSV, refcheck
// policy) only sees these interfaces; a family (norm, attention, gemm, ...) implements them with
// its inputs, reference, backends and FLOP/byte model, and calls its kernels.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/case_args.hpp"
#include "core/device_info.hpp"
#include "core/refcheck.hpp"
#include "kbench/cuda_check.hpp"
#include "kbench/dtype.hpp"

namespace kbench {

class Log;

// A backend's disposition on the present GPU: runs, or is skipped with a reason.
struct BackendSupport {
  bool supported = false;
  std::string reason;  // why not, when !supported
};

// One tensor as the [VVERBOSE] lines describe it.
struct TensorInfo {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<int64_t> stride;  // in elements
  DType dtype;
};

// A case that failed validation: a message naming the flag and the value.
class CaseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A backend that turns out, while preparing a case, not to take it (e.g. a vendor library finds
// no engine): the runner skips that backend with the reference's warning and goes on.
class BackendUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Constructs a vendor library's backend object; a failure other than a CUDA error (the library
// missing, or refusing the problem) becomes BackendUnavailable, prefixed with the library's name.
template <class Backend, class... Args>
[[nodiscard]] std::unique_ptr<Backend> make_vendor_backend(std::string_view library, Args&&... args) {
  try {
    return std::make_unique<Backend>(std::forward<Args>(args)...);
  } catch (const CudaError&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw BackendUnavailable(std::string(library) + ": " + e.what());
  }
}

// One configured problem of a routine, owning its device memory.
class Case {
 public:
  virtual ~Case() = default;

  // The reference's formulas (compat.md), from the actual problem sizes.
  [[nodiscard]] virtual double flops() const = 0;
  [[nodiscard]] virtual double bytes() const = 0;
  // Device bytes one call touches: one input/output set (decides L2-rotation copies).
  [[nodiscard]] virtual std::size_t bytes_per_copy() const = 0;
  // Device bytes beyond the copies: reference outputs and scratch for the refcheck.
  [[nodiscard]] virtual std::size_t reference_bytes() const = 0;
  [[nodiscard]] virtual std::vector<TensorInfo> tensors() const = 0;
  // Extra [VVERBOSE] lines (scales, lengths) after the tensors.
  virtual void describe(const Log& log) const = 0;

  // Whether `backend` can run this case (dtypes, shapes); the routine's support() already said
  // the backend runs on this GPU.
  [[nodiscard]] virtual BackendSupport support(std::string_view /*backend*/) const { return {true, ""}; }
  // Columns of the CSV this case fills itself (e.g. avg_actual_seq_len), by name.
  [[nodiscard]] virtual std::vector<std::pair<std::string, std::string>> result_columns() const { return {}; }

  // Allocates `copies` input/output sets filled with random data from `seed`.
  virtual void allocate(int copies, uint64_t seed, cudaStream_t stream) = 0;
  // Planning and workspace for `backend` (FlashInfer's plan()): after allocate, before any call
  // of that backend, never timed.
  virtual void prepare(std::string_view /*backend*/, cudaStream_t /*stream*/) {}
  // One call of `backend` on input set `copy`: no host synchronisation, capturable in a graph.
  virtual void launch(std::string_view backend, cudaStream_t stream, int copy) = 0;
  // Restores input set 0, poisons its outputs, runs `backend` once and the fp32 reference, and
  // compares every output with the routine's tolerance.
  [[nodiscard]] virtual RefcheckResult check(std::string_view backend, cudaStream_t stream) = 0;
  // What `backend` resolves to ("auto" picks a real backend); the name itself otherwise.
  [[nodiscard]] virtual std::string resolved_backend(std::string_view backend) const { return std::string(backend); }
};

class Routine {
 public:
  virtual ~Routine() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;
  [[nodiscard]] virtual std::string_view family() const = 0;        // "norm", "attention", ...
  [[nodiscard]] virtual std::string_view description() const = 0;   // one line for --help
  [[nodiscard]] virtual std::string_view test_name() const = 0;     // "testRmsnorm" ([INFO] Running ...)
  [[nodiscard]] virtual std::vector<FlagSpec> flags() const = 0;    // the routine's own flags
  [[nodiscard]] virtual std::vector<std::string> backends() const = 0;          // kbench implements
  [[nodiscard]] virtual std::vector<std::string> default_backends() const = 0;  // without --backends
  [[nodiscard]] virtual BackendSupport support(std::string_view backend, const DeviceInfo& device) const = 0;
  // Validates the values and builds the case (no device memory yet); throws CaseError.
  [[nodiscard]] virtual std::unique_ptr<Case> make_case(const CaseArgs& args) const = 0;
  // The configuration columns of --baseline_csv (the vLLM decode sweep's CSV), after batch_size and
  // the timings; empty when the routine has no such report.
  [[nodiscard]] virtual std::vector<std::pair<std::string, std::string>> baseline_report(const CaseArgs& /*args*/) const {
    return {};
  }
};

}  // namespace kbench
