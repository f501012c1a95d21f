# Session 45's device steps, sourced by runN.sh (which then sets R, its result folder); session 44's
# (rotate, verify) and the ones they source. (Folded into `rounds` after the calls ran, unchanged.)
source "$(dirname "${BASH_SOURCE[0]}")/../session44/steps.sh"
# rounds N SPEC...: each SPEC "NAME BINARY LIST [VAR=VALUE]" (a carried kbench on a testlist of this
# folder, with the environment given) in turn, N rounds, into $R/ab.
rounds() {
  local n=$1 r spec name bin list
  shift
  mkdir -p "$R/ab"
  for r in $(seq 1 "$n"); do
    for spec in "$@"; do
      read -r name bin list env_var <<<"$spec"
      AB=$R/ab list=experiments/session45/$list run_as "$name" "$r" "$bin" $env_var
    done
  done
}
tiled=KBENCH_WGMMA_GEMM_TILES=64x128  # the tiled FP4 GEMM (main's plan for these groups)
swapped=KBENCH_WGMMA_GEMM_TILES=swapped
# Call 1: the first swapped kernel (k45) against the tiled GEMM, beside FP8.
swap_rounds() { rounds "$1" "tiled k45 fp4_swap_ab.txt $tiled" "swapped k45 fp4_swap_ab.txt $swapped" "fp8 k45 fp8_moe.txt"; }
# Call 2: the variants (v1: k45, p2: k45p2, p4: k45p4) against the tiled GEMM.
variant_rounds() {
  rounds "$1" "tiled k45 fp4_variants.txt $tiled" "v1 k45 fp4_variants.txt $swapped" "p2 k45p2 fp4_variants.txt $swapped" \
    "p4 k45p4 fp4_variants.txt $swapped" "fp8 k45p4 fp8_moe.txt"
}
# Call 3: the landed code's plan (final) against the tiled GEMM.
final_rounds() { rounds "$1" "tiled k45f fp4_swap_ab.txt $tiled" "final k45f fp4_swap_ab.txt" "fp8 k45f fp8_moe.txt"; }
