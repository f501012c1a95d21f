#include "routines/moe/moe_pipeline.hpp"

#include "kbench/cuda_check.hpp"
#include "kernels/moe/combine.hpp"
#include "kernels/moe/gated_activation.hpp"
#include "kernels/moe/permutation.hpp"
#include "kernels/moe/permute_quantize.hpp"
#include "kernels/moe/routing.hpp"

namespace kbench {

namespace moe = kernels::moe;

ExpertGemmOperands fc1_operands(const MoeProblem& p, const MoeWorkspace& ws, const MoeOperands& o, int copy) {
  return {p.w1_rows(),
          p.hidden,
          ws.a.get(),
          p.format == MoeFormat::fp8_block_scale ? ws.a_scale.as<float>() : o.hidden_scale,
          o.w1,
          o.w1_scale,
          ws.fc1.get(),
          ws.index.at(static_cast<std::size_t>(copy)).row_offsets.as<int32_t>(),
          o.w1_sf,
          o.fc1_alpha,
          ws.act.get(),
          ws.act_scale.as<float>()};
}

ExpertGemmOperands fc2_operands(const MoeProblem& p, const MoeWorkspace& ws, const MoeOperands& o, int copy) {
  return {p.hidden,
          p.intermediate,
          ws.act.get(),
          ws.act_scale.as<float>(),
          o.w2,
          o.w2_scale,
          ws.fc2.get(),
          ws.index.at(static_cast<std::size_t>(copy)).row_offsets.as<int32_t>(),
          o.w2_sf,
          p.format == MoeFormat::nvfp4_w4a16 ? o.fc2_alpha : ws.fc2_alpha.as<float>()};
}

MoePipeline::MoePipeline(const MoeCase& problem, const ExpertGemmPlanner& plan_gemms, cudaStream_t stream,
                         std::optional<MoePipelineFeed> feed)
    : p_(problem.problem()), ws_(p_, problem.copies()), feed_(std::move(feed)) {
  for (int copy = 0; copy < problem.copies(); ++copy) {
    MoeOperands o = problem.operands(copy);
    if (feed_) {
      o.hidden = feed_->hidden;
      o.hidden_sf = feed_->hidden_sf;
      o.output = feed_->output;
    }
    operands_.push_back(o);
  }
  gemms_ = plan_gemms(problem, ws_);
  if (p_.routing_in_call || feed_) {
    stages_.push_back({"routing", [this](cudaStream_t s, int copy) { route(s, copy); }});
  } else {
    // The picks (and the local experts' histogram the permutation reads) made once, untimed.
    for (int copy = 0; copy < problem.copies(); ++copy) route(stream, copy);
  }
  stages_.push_back({"permutation", [this](cudaStream_t s, int copy) { permute(s, copy); }});
  if (gemms_->fc1_writes_activation()) {
    stages_.push_back({"fc1_activation", [this](cudaStream_t s, int copy) { gemms_->fc1(s, copy); }});
  } else {
    stages_.push_back({"fc1", [this](cudaStream_t s, int copy) { gemms_->fc1(s, copy); }});
    stages_.push_back({"activation", [this](cudaStream_t s, int copy) { activate(s, copy); }});
  }
  stages_.push_back({"fc2", [this](cudaStream_t s, int copy) { gemms_->fc2(s, copy); }});
  stages_.push_back({"combine", [this](cudaStream_t s, int copy) { combine(s, copy); }});
}

void MoePipeline::launch(cudaStream_t stream, int copy) {
  for (const OperationStage& stage : stages_) stage.launch(stream, copy);
}

std::vector<OperationStage> MoePipeline::stages() { return stages_; }

void MoePipeline::route(cudaStream_t stream, int copy) const {
  const MoeOperands& o = operands_.at(static_cast<std::size_t>(copy));
  if (feed_) {
    feed_->route(stream, o.expert_ids, o.expert_weights, index(copy).local_counts.as<int32_t>());
    return;
  }
  moe::RoutingParams routing;
  routing.config = p_.routing;
  routing.logits = o.logits;
  routing.logits_dtype = p_.logits_dtype;
  routing.bias = o.bias;
  routing.bias_dtype = DType::bfloat16;
  routing.tokens = p_.tokens;
  routing.expert_ids = o.expert_ids;
  routing.weights = o.expert_weights;
  routing.local_counts = index(copy).local_counts.as<int32_t>();
  KBENCH_CUDA_CHECK(moe::launch_routing(routing, stream));
}

// The expert-contiguous index, then the picked rows gathered in its order in FC1's format.
void MoePipeline::permute(cudaStream_t stream, int copy) const {
  const MoeWorkspace::Index& ix = index(copy);
  const MoeOperands& o = operands_.at(static_cast<std::size_t>(copy));
  moe::PermutationIndexParams order;
  order.expert_ids = o.expert_ids;
  order.local_counts = ix.local_counts.as<int32_t>();
  order.tokens = p_.tokens;
  order.top_k = static_cast<int>(p_.top_k());
  order.local_expert_offset = p_.routing.local_expert_offset;
  order.local_num_experts = static_cast<int>(p_.local_experts());
  order.row_offsets = ix.row_offsets.as<int32_t>();
  order.permuted_rows = ix.permuted_rows.as<int32_t>();
  KBENCH_CUDA_CHECK(moe::launch_permutation_index(order, stream));

  moe::PermuteQuantizeParams gather;
  const bool given_fp8_blocks = feed_ && p_.format == MoeFormat::fp8_block_scale;
  gather.format = given_fp8_blocks                                                 ? moe::GatherFormat::fp8_block_copy
                  : p_.format == MoeFormat::fp8_block_scale                       ? moe::GatherFormat::fp8_block
                  : p_.format == MoeFormat::fp8_per_tensor && !p_.hidden_in_fp8 ? moe::GatherFormat::fp8_per_tensor
                  : p_.format == MoeFormat::nvfp4 ? (p_.hidden_block_quantized ? moe::GatherFormat::nvfp4_dequantize
                                                                               : moe::GatherFormat::nvfp4_quantize)
                  : p_.format == MoeFormat::mxfp4_mxfp8 ? moe::GatherFormat::mxfp8_dequantize
                                                        : moe::GatherFormat::copy;
  gather.hidden = o.hidden;
  gather.hidden_dtype = p_.hidden_in_fp8 || given_fp8_blocks ? DType::fp8_e4m3
                        : p_.hidden_block_quantized          ? DType::uint8
                                                             : p_.input_dtype;
  gather.hidden_sf = o.hidden_sf;
  if (given_fp8_blocks) gather.hidden_block_scales = feed_->hidden_block_scales;
  gather.out_dtype = p_.input_dtype;
  gather.permuted_rows = ix.permuted_rows.as<int32_t>();
  gather.tokens = p_.tokens;
  gather.top_k = static_cast<int>(p_.top_k());
  gather.hidden_size = p_.hidden;
  gather.tensor_scale = o.hidden_scale;
  gather.out = ws_.a.get();
  gather.out_scale = ws_.a_scale.as<float>();
  if (p_.routing_scales_on_input) {
    gather.pick_weights = o.expert_weights;
    gather.row_weights = ws_.row_weights.as<float>();
  }
  KBENCH_CUDA_CHECK(moe::launch_permute_quantize(gather, stream));
}

void MoePipeline::activate(cudaStream_t stream, int copy) const {
  moe::GatedActivationParams activation;
  activation.activation = p_.activation;
  activation.output = p_.format == MoeFormat::fp8_block_scale  ? moe::ActivationOutput::fp8_block
                      : p_.format == MoeFormat::fp8_per_tensor ? moe::ActivationOutput::fp8_per_tensor
                      : p_.format == MoeFormat::nvfp4          ? moe::ActivationOutput::nvfp4
                      : p_.format == MoeFormat::mxfp4_mxfp8    ? moe::ActivationOutput::mxfp8
                                                               : moe::ActivationOutput::half;
  activation.fc1 = ws_.fc1.as<uint16_t>();
  activation.fc1_dtype = p_.input_dtype;
  activation.row_weights = ws_.row_weights.as<float>();
  activation.row_count = index(copy).row_offsets.as<int32_t>() + p_.local_experts();
  activation.max_rows = p_.picks();
  activation.intermediate = p_.intermediate;
  activation.out = ws_.act.get();
  activation.out_scale = ws_.act_scale.as<float>();
  activation.amax = ws_.act_amax.as<float>();
  if (p_.format == MoeFormat::nvfp4) {
    activation.groups = static_cast<int>(p_.local_experts());
    activation.weight_global_scales = operands_.at(static_cast<std::size_t>(copy)).w2_scale;
    activation.group_alpha = ws_.fc2_alpha.as<float>();
  }
  KBENCH_CUDA_CHECK(moe::launch_gated_activation(activation, stream));
}

void MoePipeline::combine(cudaStream_t stream, int copy) const {
  const MoeOperands& o = operands_.at(static_cast<std::size_t>(copy));
  moe::CombineParams sum;
  sum.expert_rows = ws_.fc2.as<uint16_t>();
  sum.fp16 = p_.input_dtype == DType::float16;
  sum.permuted_rows = index(copy).permuted_rows.as<int32_t>();
  sum.weights = p_.routing_scales_on_input ? nullptr : o.expert_weights;
  sum.tokens = p_.tokens;
  sum.top_k = static_cast<int>(p_.top_k());
  sum.hidden = p_.hidden;
  sum.output = static_cast<uint16_t*>(o.output);
  KBENCH_CUDA_CHECK(moe::launch_combine(sum, stream));
}

}  // namespace kbench
