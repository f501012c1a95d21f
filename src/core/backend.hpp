// Backends as objects, after the CUTLASS profiler's operations: a backend says what it is (name,
// provider, GPUs), whether it runs on the GPU present and whether it implements a case (a
// Support: yes, or no with the reason the user reads), and prepares an Operation bound to that
// case. Everything that names backends (--list, --backends, `auto`, the [WARNING] ... Skipping.
// lines, the support matrix) derives from these objects; core itself names none.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/device_info.hpp"

namespace kbench {

class Case;

// Whether a backend can run: yes, or no and why.
struct Support {
  bool supported = false;
  std::string reason;  // why not, when !supported

  [[nodiscard]] static Support yes() { return {true, ""}; }
  [[nodiscard]] static Support no(std::string reason) { return {false, std::move(reason)}; }
  [[nodiscard]] explicit operator bool() const noexcept { return supported; }
};

// Another name a backend answers to (the reference's `cudnn-native` for `cudnn`), and what kbench
// prints when it is used.
struct BackendAlias {
  std::string name;
  std::string note;
};

// What a backend is, for --list, --help and the generated support matrix.
struct BackendInfo {
  std::string name;      // "fa2", "cudnn", "flashinfer"
  std::string provider;  // whose kernels: "kbench", "cuDNN", "FlashInfer"
  std::string gpus;      // where they run: "sm_80+", "sm_90a"
  std::vector<BackendAlias> aliases = {};
};

// One stage of an operation that runs as several (the MoE layer: routing, permutation, FC1, ...).
// Its launches for input set `copy` read only what the operation's inputs and the stages before it
// wrote for that copy, so once whole calls have run, the stage can be timed on its own.
struct OperationStage {
  std::string name;
  std::function<void(cudaStream_t stream, int copy)> launch;
};

// A backend bound to one case: planned, its workspaces allocated. launch() enqueues one call on
// input set `copy` with no host synchronisation, so it can be captured in a CUDA graph.
class Operation {
 public:
  virtual ~Operation() = default;
  virtual void launch(cudaStream_t stream, int copy) = 0;
  // The stages one call runs, in order (--per_stage_timing times each alone); none where the call
  // is one piece.
  [[nodiscard]] virtual std::vector<OperationStage> stages() { return {}; }
};

class Backend {
 public:
  explicit Backend(BackendInfo info) : info_(std::move(info)) {}
  virtual ~Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  [[nodiscard]] const BackendInfo& info() const noexcept { return info_; }
  [[nodiscard]] std::string_view name() const noexcept { return info_.name; }

  // This build on this GPU: kernel images, compute capability, the vendor library's version.
  [[nodiscard]] virtual Support can_run_on(const DeviceInfo& device) const = 0;
  // This problem: dtypes, shapes, layouts. Asked only where can_run_on said yes.
  [[nodiscard]] virtual Support can_implement(const Case& problem) const = 0;
  // Plans and allocates outside timing, after the case allocated its inputs. May throw
  // BackendUnavailable where a library refuses the problem only when asked to plan it.
  [[nodiscard]] virtual std::unique_ptr<Operation> prepare(Case& problem, cudaStream_t stream) const = 0;

 private:
  BackendInfo info_;
};

// A backend of one family's cases: the casts live here, once.
template <class FamilyCase>
class BackendFor : public Backend {
 public:
  using Backend::Backend;

  [[nodiscard]] Support can_implement(const Case& problem) const final {
    return implements(static_cast<const FamilyCase&>(problem));
  }
  [[nodiscard]] std::unique_ptr<Operation> prepare(Case& problem, cudaStream_t stream) const final {
    return bind(static_cast<FamilyCase&>(problem), stream);
  }

 protected:
  [[nodiscard]] virtual Support implements(const FamilyCase& problem) const = 0;
  [[nodiscard]] virtual std::unique_ptr<Operation> bind(FamilyCase& problem, cudaStream_t stream) const = 0;
};

// The backend of a vendor library this build does not have: it answers every question with the
// library's one reason, so a missing library needs no stub per operation.
class AbsentBackend final : public Backend {
 public:
  AbsentBackend(BackendInfo info, std::string reason) : Backend(std::move(info)), reason_(std::move(reason)) {}
  [[nodiscard]] Support can_run_on(const DeviceInfo&) const override { return Support::no(reason_); }
  [[nodiscard]] Support can_implement(const Case&) const override { return Support::no(reason_); }
  [[nodiscard]] std::unique_ptr<Operation> prepare(Case&, cudaStream_t) const override;

 private:
  std::string reason_;
};

// A vendor library's backend where `Library::built`, else an AbsentBackend with the library's
// reason. `Concrete` is only instantiated in builds that have the library (if constexpr on a
// template parameter), so its code may be left out of the others.
template <class Concrete, class Library>
[[nodiscard]] std::unique_ptr<Backend> vendor_backend(BackendInfo info) {
  if constexpr (Library::built) {
    return std::make_unique<Concrete>(std::move(info));
  } else {
    return std::make_unique<AbsentBackend>(std::move(info), std::string(Library::absent_reason));
  }
}

}  // namespace kbench
