#!/usr/bin/env bash
# Builds kbench and runs its tests with ctest. Arguments go to ctest (e.g. -L gpu). Without a GPU
# the gpu-labelled tests report themselves as skipped.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KBENCH_BUILD_DIR:-$root/build}
"$root/scripts/build.sh"
ctest --test-dir "$build" --output-on-failure "$@"
