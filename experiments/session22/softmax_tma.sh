#!/usr/bin/env bash
# One device call: build and run softmax_tma.cu (256 x 128256, then 128 x 151936), clocks around it.
set -uo pipefail
cd "$(dirname "$0")"
export PATH=/usr/local/cuda/bin:$PATH
nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/softmax_tma softmax_tma.cu || exit 1
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
for shape in "256 128256" "128 151936"; do echo "== $shape"; timeout 120 /tmp/softmax_tma $shape; done
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
