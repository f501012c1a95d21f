// The attention family's FlashInfer backends: FlashInfer's own kernels (the flashinfer-python
// wheel's headers, src/backends/flashinfer), the reference tool's kernels, as yardsticks beside
// kbench's. Decode: flashinfer_fa2 (its CUDA-core decode, what its wrapper runs by default; alias
// `flashinfer`) and flashinfer_fa2_tc (its tensor-core path); prefill: flashinfer_fa3 (its Hopper
// kernel, what its backend="auto" picks on Hopper; alias `flashinfer`) and flashinfer_fa2; MLA decode:
// flashinfer_fa3 (its Hopper MLA kernel, what its MLA wrapper's backend="auto" picks on Hopper; alias
// `flashinfer`) and flashinfer_fa2 (its generic MLA kernel). Their
// code is compiled only in builds with FlashInfer; elsewhere they are absent with that one reason.
#pragma once

#include <memory>

#include "core/backend.hpp"
#include "routines/attention/decode_case.hpp"
#include "routines/attention/mla_case.hpp"
#include "routines/attention/prefill_case.hpp"

namespace kbench {

class FlashinferDecodeBackend final : public BackendFor<DecodeCase> {
 public:
  // info.name is flashinfer_fa2 (CUDA cores) or flashinfer_fa2_tc (tensor cores).
  explicit FlashinferDecodeBackend(BackendInfo info);
  [[nodiscard]] Support can_run_on(const DeviceInfo& device) const override;

 protected:
  [[nodiscard]] Support implements(const DecodeCase& problem) const override;
  [[nodiscard]] std::unique_ptr<Operation> bind(DecodeCase& problem, cudaStream_t stream) const override;

 private:
  bool tensor_cores_;
};

class FlashinferPrefillBackend final : public BackendFor<PrefillCase> {
 public:
  // info.name is flashinfer_fa2 or flashinfer_fa3.
  explicit FlashinferPrefillBackend(BackendInfo info);
  [[nodiscard]] Support can_run_on(const DeviceInfo& device) const override;

 protected:
  [[nodiscard]] Support implements(const PrefillCase& problem) const override;
  [[nodiscard]] std::unique_ptr<Operation> bind(PrefillCase& problem, cudaStream_t stream) const override;

 private:
  bool fa3_;
};

class FlashinferMlaBackend final : public BackendFor<MlaCase> {
 public:
  // info.name is flashinfer_fa2 or flashinfer_fa3.
  explicit FlashinferMlaBackend(BackendInfo info);
  [[nodiscard]] Support can_run_on(const DeviceInfo& device) const override;

 protected:
  [[nodiscard]] Support implements(const MlaCase& problem) const override;
  [[nodiscard]] std::unique_ptr<Operation> bind(MlaCase& problem, cudaStream_t stream) const override;

 private:
  bool fa3_;
};

}  // namespace kbench
