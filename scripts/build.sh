#!/usr/bin/env bash
# Configures and builds kbench into build/ (or $KBENCH_BUILD_DIR). Installs what is missing first:
# the Debian packages of the build dependencies (unpacked into .deps/, see deps.sh) and, where
# apt can, cmake and ninja. The CUDA toolkit itself must be present (nvcc on PATH or in
# /usr/local/cuda/bin).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KBENCH_BUILD_DIR:-$root/build}
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi
command -v nvcc >/dev/null || { echo "[build] nvcc not found: install the CUDA toolkit (12.4 or newer)" >&2; exit 1; }
missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v ninja >/dev/null || missing+=(ninja-build)
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  apt-get update >/dev/null && apt-get install -y "${missing[@]}" >/dev/null
fi
"$root/scripts/deps.sh"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release ${KBENCH_CMAKE_ARGS:-}
fi
cmake --build "$build" -j "${KBENCH_JOBS:-$(nproc)}"
