#!/usr/bin/env bash
# One device call: build and run softmax_l2.cu (256 x 128256, then 4096 x 32000 and 64 x 128256).
set -uo pipefail
cd "$(dirname "$0")"
out=${OUT:-/tmp}/softmax_l2; mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/softmax_l2 softmax_l2.cu || exit 1
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader | tee "$out/clocks_before.txt"
for shape in "256 128256" "4096 32000" "64 128256"; do
  echo "== $shape"; /tmp/softmax_l2 $shape
done 2>&1 | tee "$out/softmax_l2.txt"
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader | tee "$out/clocks_after.txt"
# kbench's current softmax (one cluster a row) in the same call, when asked.
if [ -n "${WITH_KBENCH:-}" ]; then
  cd ../..
  export KBENCH_CMAKE_ARGS=-DKBENCH_WITH_FLASHINFER=OFF KBENCH_BUILD_DIR=$PWD/build-device KBENCH_JOBS=16
  scripts/build.sh >"$out/build.log" 2>&1 || { tail -20 "$out/build.log"; exit 1; }
  for shape in "256 128256" "4096 32000" "64 128256"; do
    set -- $shape
    build-device/src/app/kbench --routine softmax --batch_size $1 --vocab_size $2 --input_dtype float32 --backends cuda --refcheck --output_path "$out/kbench_softmax.csv"
  done 2>&1 | grep -E "PERF|ERROR|mismatch" | tee "$out/kbench_softmax.txt"
  cd experiments/session18 && for shape in "256 128256"; do /tmp/softmax_l2 $shape; done 2>&1 | tee "$out/softmax_l2_after.txt"
fi
