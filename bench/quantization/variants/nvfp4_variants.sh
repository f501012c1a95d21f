#!/usr/bin/env bash
# Issue 17: times the NVFP4 kernel variants and grid sizes (kernels/quantization/nvfp4_variants.hpp)
# in one device call, from the repository root of a built tree:
#   bench/quantization/variants/nvfp4_variants.sh OUTPUT_DIR
# Each (KBENCH_NVFP4_VARIANT, KBENCH_NVFP4_WAVES) pair runs nvfp4_quantize 8192 x 8192 (the target,
# refchecked byte for byte) and 16384 x 8192 into OUTPUT_DIR/nvfp4_<variant>_w<waves>.csv; the
# baseline pair runs first and last (the call's drift), and mxfp4 / mxfp8 8192 x 8192 (which the
# variants leave alone) run once beside them. OUTPUT_DIR/summary.txt: one line a case, TB/s and us.
# Not under bench/quantization/ itself: bench/run.sh would source it there as a hook.
set -uo pipefail
out=${1:?usage: bench/quantization/variants/nvfp4_variants.sh OUTPUT_DIR}
kbench=${KBENCH:-build/src/app/kbench}
mkdir -p "$out"
status=0
run() {  # run NAME LINES...: one testlist of the given lines, its CSV and log named NAME
  local name=$1
  shift
  printf '%s\n' "$@" >"$out/$name.txt"
  echo "\$ KBENCH_NVFP4_VARIANT=${KBENCH_NVFP4_VARIANT:-} KBENCH_NVFP4_WAVES=${KBENCH_NVFP4_WAVES:-} kbench --testlist $name.txt"
  "$kbench" --testlist "$out/$name.txt" --output_path "$out/$name.csv" >"$out/$name.log" 2>&1 || status=1
  grep -E '^\[PERF\]|^\[ERROR\]|Testlist summary' "$out/$name.log"
}
nvfp4() {  # nvfp4 VARIANT WAVES [SUFFIX]
  KBENCH_NVFP4_VARIANT=$1 KBENCH_NVFP4_WAVES=$2 run "nvfp4_$1_w$2${3:-}" \
    "--routine nvfp4_quantize --m 8192 --k 8192 --refcheck -n 50 --case_tag $1_w$2" \
    "--routine nvfp4_quantize --m 16384 --k 8192 -n 50 --case_tag $1_w$2"
}
nvfp4 baseline 4
run mx_formats \
  "--routine mxfp4_quantize --m 8192 --k 8192 -n 50 --case_tag mx" \
  "--routine mxfp8_quantize --m 8192 --k 8192 -n 50 --case_tag mx"
nvfp4 fixed_g 4
nvfp4 fixed_g_overlap 4
nvfp4 baseline 8
nvfp4 fixed_g 8
nvfp4 fixed_g_overlap 8
nvfp4 fixed_g_overlap 6
nvfp4 baseline 4 _again
# One line a case: routine, m, k, case tag, TB/s, median us, refcheck (columns found by name).
for csv in "$out"/*.csv; do
  awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next }
           { printf "%-16s %6s x %-5s %-22s %.4f TB/s %8.2f us  %s\n", $c["routine"], $c["m"], $c["k"], $c["case_tag"],
                    $c["tb_per_sec"], $c["median_time"] * 1000, $c["refcheck_status"] }' "$csv"
done | tee "$out/summary.txt"
exit $status
