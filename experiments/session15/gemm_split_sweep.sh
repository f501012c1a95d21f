#!/usr/bin/env bash
# Session 15: kbench's GEMM split-K count swept at the decode shapes (KBENCH_WGMMA_GEMM_SPLITS), each
# line refchecked, beside cuBLASLt's per-tensor FP8 and BF16 GEMMs measured in the same call.
#   experiments/session15/gemm_split_sweep.sh OUT_DIR
set -uo pipefail
out=$1
mkdir -p "$out"
kb=${KBENCH:-build-device/src/app/kbench}
lines=(
  "--routine gemm_fp8_nt_groupwise --m 64 128 --n 2112 --k 7168 --scale_major_mode MN --backends cuda --refcheck"
  "--routine gemm_fp8_nt_groupwise --m 64 128 --n 7168 --k 16384 --scale_major_mode MN --backends cuda --refcheck"
  "--routine mm_bf16 --m 64 128 --n 2112 --k 7168 --backends cuda --refcheck"
)
printf '%s\n' "--routine mm_fp8 --m 64 128 --n 2112 --k 7168 --backends cublas --refcheck" \
  "--routine mm_fp8 --m 64 128 --n 7168 --k 16384 --backends cublas --refcheck" \
  "--routine mm_bf16 --m 64 128 --n 2112 --k 7168 --backends cublaslt --refcheck" >"$out/vendor.txt"
"$kb" --testlist "$out/vendor.txt" --output_path "$out/vendor.csv" >"$out/vendor.log" 2>&1
printf '%s\n' "${lines[@]}" >"$out/cuda.txt"
for s in default 1 2 3 4 5 6 8 10 14; do
  if [ "$s" = default ]; then
    "$kb" --testlist "$out/cuda.txt" --output_path "$out/splits_default.csv" >"$out/splits_default.log" 2>&1
  else
    KBENCH_WGMMA_GEMM_SPLITS=$s "$kb" --testlist "$out/cuda.txt" --output_path "$out/splits_$s.csv" >"$out/splits_$s.log" 2>&1
  fi
done
"$kb" --testlist "$out/vendor.txt" --output_path "$out/vendor_again.csv" >"$out/vendor_again.log" 2>&1
python3 experiments/session15/summarize.py "$out"
