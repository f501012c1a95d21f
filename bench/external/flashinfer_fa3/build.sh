#!/usr/bin/env bash
# Builds fi_prefill_bench: FlashInfer's own sm90 (fa3) batch prefill kernel, compiled from the
# headers of the PyPI wheel `flashinfer-python` (the reference tool's package), in a small timing
# harness. It is a yardstick for kbench's fa3 on the same GPU, not part of kbench: CMake and CI never
# build it. The wheel is unpacked into .deps-flashinfer/ (its include, CUTLASS and CCCL folders), the
# binary goes to build-flashinfer/ (carry that folder to the device: scripts/device.sh
# compare_flashinfer runs it beside kbench). Needs nvcc with sm_90a; about a minute on one core.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
wheel_version=0.7.2.post1
deps="$root/.deps-flashinfer"
out="$root/build-flashinfer"
if [ ! -f "$deps/.complete-$wheel_version" ]; then
  rm -rf "$deps"; mkdir -p "$deps"
  python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$deps" "flashinfer-python==$wheel_version"
  python3 - "$deps"/flashinfer_python-*.whl "$deps" <<'PY'
import sys, zipfile
wheel, dest = sys.argv[1:]
keep = ("flashinfer/data/include/", "flashinfer/data/cutlass/include/", "flashinfer/data/cutlass/tools/util/include/",
        "flashinfer/data/cccl/libcudacxx/include/", "flashinfer/data/cccl/cub/", "flashinfer/data/cccl/thrust/")
with zipfile.ZipFile(wheel) as archive:
    archive.extractall(dest, [n for n in archive.namelist() if n.startswith(keep) or "LICENSE" in n])
PY
  rm -f "$deps"/flashinfer_python-*.whl
  touch "$deps/.complete-$wheel_version"
fi
data="$deps/flashinfer/data"
mkdir -p "$out"
# -diag-suppress: warnings inside FlashInfer's and CUTLASS's headers.
nvcc -std=c++17 -O3 -arch=sm_90a -DNDEBUG -lineinfo --expt-relaxed-constexpr --expt-extended-lambda \
  -diag-suppress 20012,3357,1444 \
  -I"$data/cccl/libcudacxx/include" -I"$data/cccl/cub" -I"$data/cccl/thrust" -I"$data/include" \
  -I"$data/cutlass/include" -I"$data/cutlass/tools/util/include" \
  -o "$out/fi_prefill_bench" "$(dirname "$0")/fi_prefill_bench.cu" -lcuda
echo "[flashinfer] built $out/fi_prefill_bench against flashinfer-python $wheel_version"
