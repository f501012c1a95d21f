#!/usr/bin/env bash
# The main job: build kbench, then run the quick-start testlist (every RMSNorm routine, checked
# against the fp32 reference) and write build/quickstart.csv. On a machine without a GPU it builds
# and then says that no CUDA device is present.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KBENCH_BUILD_DIR:-$root/build}
"$root/scripts/build.sh" || exit
"$build/src/app/kbench" --testlist "$root/samples/quickstart.txt" --output_path "$build/quickstart.csv"
status=$?
case $status in
  0) echo "[quickstart] results: $build/quickstart.csv" ;;
  3) echo "[quickstart] kbench built ($build/src/app/kbench); no CUDA device is present here to run the quick start on."
     exit 0 ;;
esac
exit $status
