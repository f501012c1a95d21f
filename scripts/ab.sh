#!/usr/bin/env bash
# A/B timing of two builds in one device call (the GPU is power-capped and drifts by a few percent
# between calls, so only rows of one call compare).
#   scripts/ab.sh prepare REV         here: REV's sources into .ab/base (git archive; ignored)
#   scripts/ab.sh run TESTLIST [N]    on the device (carry .deps and .ab): builds kbench from .ab/base
#                                     and from the working tree, then runs TESTLIST N times (2) with
#                                     each, alternating base, new, base, new, ...; CSVs and logs into
#                                     $OUT/ab (ab_<base|new>_<round>.csv), [PERF] lines printed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
case ${1:-} in
  prepare)
    rev=${2:?usage: ab.sh prepare REV}
    rm -rf .ab/base && mkdir -p .ab/base
    git archive "$rev" | tar -x -C .ab/base
    ln -s ../../.deps .ab/base/.deps
    echo "[ab] .ab/base = $(git rev-parse --short "$rev")" ;;
  run)
    list=$(realpath "${2:?usage: ab.sh run TESTLIST [N]}")
    rounds=${3:-2}
    out=${OUT:-/tmp/kbench-ab}/ab
    mkdir -p "$out"
    export PATH=/usr/local/cuda/bin:$PATH
    for side in base new; do
      src=$root; [ $side = base ] && src=$root/.ab/base
      if ! KBENCH_BUILD_DIR=$root/build-ab-$side "$src/scripts/build.sh" >"$out/build_$side.log" 2>&1; then
        echo "[ab] build of $side FAILED"; tail -20 "$out/build_$side.log"; exit 1
      fi
    done
    for r in $(seq 1 "$rounds"); do
      for side in base new; do
        "$root/build-ab-$side/src/app/kbench" --testlist "$list" --output_path "$out/ab_${side}_$r.csv" \
          >"$out/ab_${side}_$r.log" 2>&1 || echo "[ab] $side round $r: exit $?"
        grep -E '^\[PERF\]' "$out/ab_${side}_$r.log" | sed "s/^/$side $r /"
      done
    done ;;
  *) sed -n '2,9p' "$0"; exit 2 ;;
esac
