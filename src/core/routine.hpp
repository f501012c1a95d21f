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

#include "core/backend.hpp"
#include "core/case_args.hpp"
#include "core/device_info.hpp"
#include "core/refcheck.hpp"
#include "kbench/cuda_check.hpp"
#include "kbench/dtype.hpp"

namespace kbench {

class Log;

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

// The most elements a case's largest tensor may have (2^40): the routines refuse larger sizes with a
// CaseError before any size arithmetic can overflow.
inline constexpr double kMaxElements = 1099511627776.0;

// The value of an integer flag, which must be positive: else a CaseError naming the flag.
[[nodiscard]] int64_t positive_integer(const CaseArgs& args, const char* flag);

// A backend that turns out, while preparing a case, not to take it (e.g. a vendor library finds
// no engine): the runner skips that backend with the reference's warning and goes on.
class BackendUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Constructs a vendor library's object (a planned cuDNN graph, ...); a failure other than a CUDA
// error (the library refusing the problem) becomes BackendUnavailable, prefixed with the library's
// name.
template <class VendorObject, class... Args>
[[nodiscard]] std::unique_ptr<VendorObject> make_vendor_object(std::string_view library, Args&&... args) {
  try {
    return std::make_unique<VendorObject>(std::forward<Args>(args)...);
  } catch (const CudaError&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw BackendUnavailable(std::string(library) + ": " + e.what());
  }
}

// One output that the refcheck compares, in input set 0. fp8 outputs are compared on their
// format's grid (compare_quantized), the others with isclose.
struct CheckedOutput {
  std::string name;
  const void* data = nullptr;
  DType dtype = DType::float32;
  std::size_t count = 0;
  Tolerance tolerance;
  bool poison = true;  // false where the output is written over an input (in place)
  // The same call on the same inputs must write the same values (samplers: the seed and offset are
  // fixed): the refcheck calls the backend a second time and compares the two results.
  bool repeatable = false;
};

// One configured problem of a routine, owning its device memory. Its backends reach its tensors
// through the family's own accessors; the harness sees only this interface.
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
  // Columns of the CSV this case fills itself (e.g. avg_actual_seq_len), by name.
  [[nodiscard]] virtual std::vector<std::pair<std::string, std::string>> result_columns() const { return {}; }

  // Allocates `copies` input/output sets filled with random data from `seed`.
  virtual void allocate(int copies, uint64_t seed, cudaStream_t stream) = 0;

  // The refcheck (core/verify.hpp runs it the same way for every routine): input set 0 restored,
  // the fp32 reference of every output, the outputs poisoned, one call of the backend, compared.
  [[nodiscard]] virtual std::vector<CheckedOutput> outputs() const = 0;
  // Rewrites input set 0's inputs, for routines whose calls change them (in place).
  virtual void restore_inputs(cudaStream_t /*stream*/) {}
  // The expected values of outputs(), in order, from input set 0 as restore_inputs leaves it.
  [[nodiscard]] virtual std::vector<std::vector<float>> reference(cudaStream_t stream) = 0;
  // Compares what a backend wrote (`got`: outputs() read back as floats, in order) with reference():
  // by default each output by isclose with its tolerance (fp8 outputs on their grid). A case whose
  // outputs are right by a rule rather than by closeness to one expected tensor (a sampled id must
  // lie in the filtered set; top-k indices may break ties either way) overrides it, with
  // reference() giving whatever its rule needs.
  [[nodiscard]] virtual std::vector<Comparison> compare(const std::vector<CheckedOutput>& outputs,
                                                        const std::vector<std::vector<float>>& expected,
                                                        const std::vector<std::vector<float>>& got) const;
};

class Routine {
 public:
  virtual ~Routine() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;
  [[nodiscard]] virtual std::string_view family() const = 0;        // "norm", "attention", ...
  [[nodiscard]] virtual std::string_view description() const = 0;   // one line for --help
  [[nodiscard]] virtual std::string_view test_name() const = 0;     // "testRmsnorm" ([INFO] Running ...)
  [[nodiscard]] virtual std::vector<FlagSpec> flags() const = 0;    // the routine's own flags
  [[nodiscard]] virtual std::vector<std::string> default_backends() const = 0;  // without --backends
  // `auto`: the backends to try for `problem`, best first (the first that runs is taken); empty
  // where the routine has no `auto`. auto_rule() says the rule in words for --list.
  [[nodiscard]] virtual std::vector<std::string> auto_candidates(const Case& /*problem*/) const { return {}; }
  [[nodiscard]] virtual std::string_view auto_rule() const { return {}; }
  // Validates the values and builds the case (no device memory yet); throws CaseError.
  [[nodiscard]] virtual std::unique_ptr<Case> make_case(const CaseArgs& args) const = 0;
  // The configuration columns of --baseline_csv (the vLLM decode sweep's CSV), after batch_size and
  // the timings; empty when the routine has no such report.
  [[nodiscard]] virtual std::vector<std::pair<std::string, std::string>> baseline_report(const CaseArgs& /*args*/) const {
    return {};
  }

  // Flags whose value the reference writes under a CSV column of another name, as {flag, column}
  // (BatchMLAPagedAttentionWrapper's --mla_is_var_seq fills is_var_seq).
  [[nodiscard]] virtual std::vector<std::pair<std::string, std::string>> renamed_flag_columns() const { return {}; }
  // The CSV column the value of `flag` fills.
  [[nodiscard]] std::string csv_column(const FlagSpec& flag) const;

  [[nodiscard]] const std::vector<std::unique_ptr<Backend>>& backends() const noexcept { return backends_; }
  // The backend called `name` or answering to it as an alias; null where there is none.
  [[nodiscard]] const Backend* find_backend(std::string_view name) const;
  [[nodiscard]] bool has_auto() const { return !auto_rule().empty(); }

 protected:
  void add_backend(std::unique_ptr<Backend> backend);

 private:
  std::vector<std::unique_ptr<Backend>> backends_;
};

}  // namespace kbench
