// FlashInfer's FP8 RoPE kernels (pos_enc.cuh) through kbench's glue, beside kbench's own: the FP8
// cases of rope_fp8_cases.txt (odd sizes, partial rotary dims, interleaved pairs, e5m2, the MLA form,
// page sizes 1 / 16 / 64 in NHD and HND), both backends refchecked against the host reference.
// Built only with FlashInfer.
#include <gtest/gtest.h>

#include <string>

#include "gpu_test_support.hpp"

namespace {

TEST(FlashinferRope, Fp8RoutinesPassTheRefcheck) {
  KBENCH_REQUIRE_GPU();
  kbench::testing::expect_testlist_passes(std::string(KBENCH_SOURCE_DIR) + "/tests/gpu/rope/rope_fp8_cases.txt",
                                          "--backends cuda flashinfer -n 3", 14);
}

}  // namespace
