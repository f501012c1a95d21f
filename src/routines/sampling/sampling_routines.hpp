// The sampling family: softmax, the samplers (from probabilities or logits, top-k, top-p, min-p,
// both filters), the renorms and the mask, chain speculative sampling, radix top-k and its two
// transforms, each on kbench's row kernels (`cuda`), the sort-based baseline (`cub`, where there is
// a filter) and FlashInfer's kernels (`flashinfer`).
#pragma once

#include "core/registry.hpp"

namespace kbench {

void register_sampling_routines(RoutineRegistry& registry);

}  // namespace kbench
