#include "routines/attention/kbench_backends.hpp"

#include <algorithm>
#include <optional>

#include "kbench/cuda_check.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/attention/mla/mla_fa2.hpp"
#include "kernels/attention/mla/mla_fa3.hpp"
#include "routines/attention/decode_case.hpp"
#include "routines/attention/mla_case.hpp"
#include "routines/attention/prefill_case.hpp"
#include "routines/device_tensors.hpp"

namespace kbench {
namespace {

std::string no_kernel_image(const DeviceInfo& device) {
  return "this build has no kernel image for sm_" + std::to_string(device.cc_major * 10 + device.cc_minor);
}

// A decode plan on the device (work items, merge offsets, partial-output workspace), uploaded
// outside timing.
struct DeviceDecodePlan {
  DeviceBuffer items;
  DeviceBuffer merge_indptr;
  DeviceBuffer workspace;
  kernels::DecodeWorkspace view;

  DeviceDecodePlan(const kernels::DecodePlan& plan, int group, int head_dim, cudaStream_t stream)
      : items(upload(plan.items, stream)),
        merge_indptr(upload(plan.merge_indptr, stream)),
        workspace(plan.workspace_bytes(group, head_dim)) {
    view.items = items.as<kernels::DecodeWorkItem>();
    view.num_items = static_cast<int>(plan.items.size());
    view.merge_indptr = plan.merge_indptr.empty() ? nullptr : merge_indptr.as<int32_t>();
    view.workspace = workspace.get();
    view.max_pair_slots = plan.max_pair_slots;
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
};

Support decode_kernels_run_on(const DeviceInfo& device) {
  if (kernels::decode_kernels_available() != cudaSuccess) {
    (void)cudaGetLastError();
    return Support::no(no_kernel_image(device));
  }
  if (device.cc_major < 8) return Support::no("kbench's decode kernels need sm_80+ (cp.async, bf16 mma.sync)");
  return Support::yes();
}

// A split-KV decode kernel with its plan.
class DecodeKernelOperation final : public Operation {
 public:
  DecodeKernelOperation(kernels::DecodeKernel kernel, const DecodeCase& problem, cudaStream_t stream)
      : kernel_(kernel), problem_(problem), plan_(plan(kernel, problem.problem()), problem.problem().group(),
                                                 problem.problem().head_dim, stream) {}
  void launch(cudaStream_t stream, int copy) override {
    KBENCH_CUDA_CHECK(kernels::launch_decode(kernel_, problem_.params(copy), plan_.view, stream));
  }

 private:
  static kernels::DecodePlan plan(kernels::DecodeKernel kernel, const DecodeProblem& p) {
    return kernels::plan_decode(kernel, p.pages.indptr, p.pages.last_page_len, p.page_size, p.num_qo_heads,
                                p.num_kv_heads, p.head_dim, current_device_sm_count(), p.kv_dtype);
  }

  kernels::DecodeKernel kernel_;
  const DecodeCase& problem_;
  DeviceDecodePlan plan_;
};

class DecodeKernelBackend final : public BackendFor<DecodeCase> {
 public:
  explicit DecodeKernelBackend(kernels::DecodeKernel kernel)
      : BackendFor({kernel == kernels::DecodeKernel::fa2 ? "fa2" : "fa2_tc", "kbench", "sm_80+"}), kernel_(kernel) {}

  [[nodiscard]] Support can_run_on(const DeviceInfo& device) const override { return decode_kernels_run_on(device); }

 protected:
  [[nodiscard]] Support implements(const DecodeCase& problem) const override {
    const DecodeProblem& p = problem.problem();
    if (p.out_nvfp4) {
      return Support::no("nvfp4 output is written by Blackwell's trtllm-gen kernels; kbench's decode writes "
                         "bfloat16, float16 or fp8");
    }
    if (!kernels::decode_supported(kernel_, problem.params(DecodeCase::kNoCopy))) {
      return Support::no("its kernel does not take this shape or dtype combination (q " +
                         std::string(dtype_name(p.q_dtype)) + ", kv " + std::string(dtype_name(p.kv_dtype)) +
                         ", head_dim " + std::to_string(p.head_dim) + ", group " + std::to_string(p.group()) + ")");
    }
    return Support::yes();
  }
  [[nodiscard]] std::unique_ptr<Operation> bind(DecodeCase& problem, cudaStream_t stream) const override {
    return std::make_unique<DecodeKernelOperation>(kernel_, problem, stream);
  }

 private:
  kernels::DecodeKernel kernel_;
};

// A prefill kernel with its plan (FlashInfer-style work items: tiles of (request, kv head)).
class PrefillKernelOperation final : public Operation {
 public:
  PrefillKernelOperation(kernels::PrefillKernel kernel, const PrefillCase& problem, cudaStream_t stream)
      : kernel_(kernel), problem_(problem) {
    const PrefillProblem& p = problem.problem();
    const std::vector<kernels::PrefillWorkItem> items =
        kernels::plan_prefill(kernel, problem.params(0), p.qo_indptr, p.paged ? p.pages.indptr : p.kv_token_indptr,
                              p.pages.last_page_len, current_device_sm_count());
    items_ = upload(items, stream);
    view_.items = items_.as<kernels::PrefillWorkItem>();
    view_.num_items = static_cast<int>(items.size());
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  void launch(cudaStream_t stream, int copy) override {
    KBENCH_CUDA_CHECK(kernels::launch_prefill(kernel_, problem_.params(copy), view_, stream));
  }

 private:
  kernels::PrefillKernel kernel_;
  const PrefillCase& problem_;
  DeviceBuffer items_;
  kernels::PrefillWorkspace view_;
};

class PrefillKernelBackend final : public BackendFor<PrefillCase> {
 public:
  explicit PrefillKernelBackend(kernels::PrefillKernel kernel)
      : BackendFor(kernel == kernels::PrefillKernel::fa3 ? BackendInfo{"fa3", "kbench", "sm_90a"}
                                                         : BackendInfo{"fa2", "kbench", "sm_80+"}),
        kernel_(kernel) {}

  [[nodiscard]] Support can_run_on(const DeviceInfo& device) const override {
    if (kernel_ == kernels::PrefillKernel::fa3 && (device.cc_major != 9 || device.cc_minor != 0)) {
      return Support::no("fa3 is kbench's Hopper kernel: TMA and wgmma, sm_90a only");
    }
    if (kernel_ == kernels::PrefillKernel::fa2 && device.cc_major < 8) {
      return Support::no("kbench's fa2 prefill needs sm_80+: bf16 mma.sync and cp.async");
    }
    const cudaError_t status = kernels::prefill_kernels_available(kernel_);
    if (status == cudaSuccess) return Support::yes();
    (void)cudaGetLastError();
    if (status == cudaErrorNoKernelImageForDevice) return Support::no(no_kernel_image(device) + " (" + std::string(name()) + ")");
    return Support::no("kbench's " + std::string(name()) + " prefill kernel is not available here (" +
                       cudaGetErrorName(status) + ")");
  }

 protected:
  [[nodiscard]] Support implements(const PrefillCase& problem) const override {
    const PrefillProblem& p = problem.problem();
    if (kernel_ == kernels::PrefillKernel::fa2 && (is_fp8(p.q_dtype) || is_fp8(p.kv_dtype))) {
      return Support::no("fa2 takes bfloat16 or float16 q and KV; fp8 runs on fa3");
    }
    if (!kernels::prefill_supported(kernel_, problem.params(PrefillCase::kNoCopy))) {
      return Support::no("its kernel does not take this shape or dtype combination (q " +
                         std::string(dtype_name(p.q_dtype)) + ", kv " + std::string(dtype_name(p.kv_dtype)) +
                         ", out " + std::string(dtype_name(p.out_dtype)) + ", head_dim_qk " +
                         std::to_string(p.head_dim_qk) + ", head_dim_vo " + std::to_string(p.head_dim_vo) +
                         ", group " + std::to_string(p.group()) +
                         (p.paged ? ", page_size " + std::to_string(p.page_size) : std::string(", ragged")) + ")");
    }
    return Support::yes();
  }
  [[nodiscard]] std::unique_ptr<Operation> bind(PrefillCase& problem, cudaStream_t stream) const override {
    return std::make_unique<PrefillKernelOperation>(kernel_, problem, stream);
  }

 private:
  kernels::PrefillKernel kernel_;
};

// kbench's decode kernel (fa2_tc) on a prefill case whose requests have one query token each: the
// token is the last of its sequence, so causal or not it attends every key, as a decode does; the
// prefill kernels spend a 64- or 128-row query tile on it and read K/V once per query head (the
// attention grid: fa3 0.40x cuDNN at batch 64 x 8192 keys). Ragged K/V are read as pages of one
// token (PagedKvCache::v_data), their page table (token i is page i) planned here, outside timing.
class PrefillOnDecodeOperation final : public Operation {
 public:
  PrefillOnDecodeOperation(const PrefillCase& problem, cudaStream_t stream)
      : problem_(problem), last_page_len_(decode_last_page_len(problem.problem())) {
    const PrefillProblem& p = problem.problem();
    if (!p.paged) {
      std::vector<int32_t> tokens(static_cast<std::size_t>(p.kv_token_indptr.back()));
      for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>(i);
      token_pages_ = upload(tokens, stream);
      last_page_len_device_ = upload(last_page_len_, stream);
    }
    plan_.emplace(kernels::plan_decode(kernels::DecodeKernel::fa2_tc, p.paged ? p.pages.indptr : p.kv_token_indptr,
                                       last_page_len_, p.paged ? p.page_size : 1, p.num_qo_heads, p.num_kv_heads,
                                       p.head_dim_qk, current_device_sm_count(), p.kv_dtype),
                  p.group(), p.head_dim_qk, stream);
  }
  void launch(cudaStream_t stream, int copy) override {
    KBENCH_CUDA_CHECK(kernels::launch_decode(kernels::DecodeKernel::fa2_tc,
                                             decode_params(problem_.params(copy), token_pages_.as<int32_t>(),
                                                           last_page_len_device_.as<int32_t>()),
                                             plan_->view, stream));
  }

  // The decode kernel's view of prefill parameters (ragged: `token_pages` and `last_page_len` are the
  // one-token pages' table).
  static kernels::DecodeParams decode_params(const kernels::PrefillParams& p, const int32_t* token_pages,
                                             const int32_t* last_page_len) {
    kernels::DecodeParams d;
    d.q = p.q;
    d.q_dtype = p.q_dtype;
    d.q_scale = p.q_scale;
    d.out = p.out;
    d.out_dtype = p.out_dtype;
    d.batch = p.batch;
    d.num_qo_heads = p.num_qo_heads;
    d.sm_scale = p.sm_scale;
    d.enable_pdl = p.enable_pdl;
    kernels::PagedKvCache& kv = d.kv;
    kv.dtype = p.kv_dtype;
    kv.num_kv_heads = p.num_kv_heads;
    kv.head_dim = p.head_dim_qk;
    kv.k_scale = p.k_scale;
    kv.v_scale = p.v_scale;
    if (p.paged) {
      kv.data = p.pages.data;
      kv.layout = p.pages.layout;
      kv.page_size = p.pages.page_size;
      kv.indptr = p.pages.indptr;
      kv.indices = p.pages.indices;
      kv.last_page_len = p.pages.last_page_len;
    } else {
      kv.data = p.ragged.k;
      kv.v_data = p.ragged.v;
      kv.layout = kernels::KvLayout::NHD;
      kv.page_size = 1;
      kv.indptr = p.ragged.indptr;
      kv.indices = token_pages;
      kv.last_page_len = last_page_len;
    }
    return d;
  }

 private:
  // The last-page lengths of the decode plan: the paged cache's, or (ragged) 1 per request with keys.
  static std::vector<int32_t> decode_last_page_len(const PrefillProblem& p) {
    if (p.paged) return p.pages.last_page_len;
    std::vector<int32_t> lens(static_cast<std::size_t>(p.batch));
    for (int b = 0; b < p.batch; ++b) lens[static_cast<std::size_t>(b)] = p.kv_token_indptr[b + 1] > p.kv_token_indptr[b];
    return lens;
  }

  const PrefillCase& problem_;
  std::vector<int32_t> last_page_len_;
  DeviceBuffer token_pages_;
  DeviceBuffer last_page_len_device_;
  std::optional<DeviceDecodePlan> plan_;
};

class PrefillOnDecodeBackend final : public BackendFor<PrefillCase> {
 public:
  PrefillOnDecodeBackend() : BackendFor({"fa2_tc", "kbench", "sm_80+"}) {}

  [[nodiscard]] Support can_run_on(const DeviceInfo& device) const override { return decode_kernels_run_on(device); }

 protected:
  [[nodiscard]] Support implements(const PrefillCase& problem) const override {
    const PrefillProblem& p = problem.problem();
    if (!p.one_query_token_each()) {
      return Support::no("fa2_tc is kbench's decode kernel: it takes prefill cases with one query token per "
                         "request (--s_qo 1)");
    }
    if (p.head_dim_qk != p.head_dim_vo) return Support::no("fa2_tc takes head_dim_qk == head_dim_vo");
    const kernels::DecodeParams d =
        PrefillOnDecodeOperation::decode_params(problem.params(PrefillCase::kNoCopy), nullptr, nullptr);
    if (!kernels::decode_supported(kernels::DecodeKernel::fa2_tc, d)) {
      return Support::no("its kernel does not take this shape or dtype combination (q " +
                         std::string(dtype_name(p.q_dtype)) + ", kv " + std::string(dtype_name(p.kv_dtype)) +
                         ", out " + std::string(dtype_name(p.out_dtype)) + ", head_dim " +
                         std::to_string(p.head_dim_qk) + ", group " + std::to_string(p.group()) + ")");
    }
    return Support::yes();
  }
  [[nodiscard]] std::unique_ptr<Operation> bind(PrefillCase& problem, cudaStream_t stream) const override {
    return std::make_unique<PrefillOnDecodeOperation>(problem, stream);
  }
};

// One of kbench's MLA decode kernels (fa2: mma.sync, sm_80+; fa3: wgmma, sm_90a), as its backend
// calls it.
struct MlaKernelEntry {
  BackendInfo info;
  const char* needs;   // why it refuses other devices
  const char* dtypes;  // the q / KV dtype pairs it takes, for the refusal
  bool (*runs_on)(const DeviceInfo&);
  bool (*dtypes_supported)(DType, DType);
  bool (*supported)(const kernels::MlaParams&);
  cudaError_t (*available)();
  kernels::MlaPlan (*plan)(const kernels::MlaParams&, std::span<const int32_t>, int);
  cudaError_t (*launch)(const kernels::MlaParams&, const kernels::MlaPlan&, void*, void*, cudaStream_t);
};

const MlaKernelEntry& mla_kernel_entry(kernels::MlaKernel kernel) {
  // Both kernels take the same pairs (kernels::mla_kernel_dtypes_supported).
  constexpr const char* kDtypes = "bfloat16 / bfloat16, bfloat16 / fp8_e4m3 or fp8_e4m3 / fp8_e4m3";
  static const MlaKernelEntry fa2{{"fa2", "kbench", "sm_80+"},
                                  "kbench's MLA fa2 kernel needs sm_80+ (cp.async, bf16 mma.sync)",
                                  kDtypes,
                                  [](const DeviceInfo& d) { return d.cc_major >= 8; },
                                  kernels::mla_fa2_dtypes_supported,
                                  kernels::mla_fa2_supported,
                                  kernels::mla_fa2_available,
                                  kernels::plan_mla_fa2,
                                  kernels::launch_mla_fa2};
  static const MlaKernelEntry fa3{{"fa3", "kbench", "sm_90a"},
                                  "fa3 is kbench's Hopper MLA kernel: wgmma and setmaxnreg, sm_90a only",
                                  kDtypes,
                                  [](const DeviceInfo& d) { return d.cc_major == 9 && d.cc_minor == 0; },
                                  kernels::mla_fa3_dtypes_supported,
                                  kernels::mla_fa3_supported,
                                  kernels::mla_fa3_available,
                                  kernels::plan_mla_fa3,
                                  kernels::launch_mla_fa3};
  return kernel == kernels::MlaKernel::fa3 ? fa3 : fa2;
}

// A kbench MLA kernel with its plan (rows per CTA, KV splits or fa3's balanced schedule from the
// requests' lengths, the partial-output workspace holding the schedule), made here, outside timing.
class MlaKernelOperation final : public Operation {
 public:
  MlaKernelOperation(const MlaKernelEntry& kernel, const MlaCase& problem) : kernel_(kernel), problem_(problem) {
    const MlaProblem& p = problem.problem();
    const kernels::MlaParams params = problem.params(MlaCase::kNoCopy);
    plan_ = kernel.plan(params, p.pages.seq_lens, current_device_sm_count());
    const std::size_t bytes = plan_.workspace_bytes(params);
    if (bytes > 0) workspace_ = DeviceBuffer(bytes);
    KBENCH_CUDA_CHECK(kernels::upload_mla_schedule(params, plan_, workspace_.get()));
  }
  void launch(cudaStream_t stream, int copy) override {
    KBENCH_CUDA_CHECK(kernel_.launch(problem_.params(copy), plan_, problem_.out(copy),
                                     workspace_.bytes() > 0 ? workspace_.get() : nullptr, stream));
  }

 private:
  const MlaKernelEntry& kernel_;
  const MlaCase& problem_;
  kernels::MlaPlan plan_;
  DeviceBuffer workspace_;
};

class MlaKernelBackend final : public BackendFor<MlaCase> {
 public:
  explicit MlaKernelBackend(kernels::MlaKernel kernel)
      : BackendFor(mla_kernel_entry(kernel).info), kernel_(mla_kernel_entry(kernel)) {}

  [[nodiscard]] Support can_run_on(const DeviceInfo& device) const override {
    if (!kernel_.runs_on(device)) return Support::no(kernel_.needs);
    if (kernel_.available() != cudaSuccess) {
      (void)cudaGetLastError();
      return Support::no(no_kernel_image(device));
    }
    return Support::yes();
  }

 protected:
  [[nodiscard]] Support implements(const MlaCase& problem) const override {
    const MlaProblem& p = problem.problem();
    const std::string kernel = "kbench's MLA " + std::string(name()) + " kernel";
    if (!kernel_.dtypes_supported(p.q_dtype, p.kv_dtype)) {
      return Support::no(kernel + " takes q / KV " + kernel_.dtypes + " only (got q " +
                         std::string(dtype_name(p.q_dtype)) + ", kv " + std::string(dtype_name(p.kv_dtype)) + ")");
    }
    if (p.head_dim_ckv != 512 || p.head_dim_kpe != 64) {
      return Support::no(kernel + " takes head dims 512 / 64 only (got " + std::to_string(p.head_dim_ckv) + " / " +
                         std::to_string(p.head_dim_kpe) + ")");
    }
    if (!kernel_.supported(problem.params(MlaCase::kNoCopy))) {
      return Support::no(kernel + " does not take this shape (batch " + std::to_string(p.batch) + ", s_qo " +
                         std::to_string(p.s_qo) + ", heads " + std::to_string(p.num_heads) + ")");
    }
    return Support::yes();
  }
  [[nodiscard]] std::unique_ptr<Operation> bind(MlaCase& problem, cudaStream_t) const override {
    return std::make_unique<MlaKernelOperation>(kernel_, problem);
  }

 private:
  const MlaKernelEntry& kernel_;
};

}  // namespace

std::unique_ptr<Backend> make_mla_kernel_backend(kernels::MlaKernel kernel) {
  return std::make_unique<MlaKernelBackend>(kernel);
}

std::unique_ptr<Backend> make_decode_kernel_backend(kernels::DecodeKernel kernel) {
  return std::make_unique<DecodeKernelBackend>(kernel);
}

std::unique_ptr<Backend> make_prefill_kernel_backend(kernels::PrefillKernel kernel) {
  return std::make_unique<PrefillKernelBackend>(kernel);
}

std::unique_ptr<Backend> make_prefill_on_decode_backend() { return std::make_unique<PrefillOnDecodeBackend>(); }

}  // namespace kbench
