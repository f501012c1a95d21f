// How a paged KV cache orders a page's tokens and heads; shared by the decode and prefill kernels.
#pragma once

namespace kbench::kernels {

enum class KvLayout {
  NHD,  // cache[page][k|v][slot][kv_head][dim]   (token-major, FlashInfer's default)
  HND,  // cache[page][k|v][kv_head][slot][dim]   (head-major, vLLM's)
};

}  // namespace kbench::kernels
