#!/usr/bin/env bash
# A/B timing of builds in one device call (the GPU is power-capped and drifts by a few percent
# between calls, so only rows of one call compare).
#   scripts/ab.sh prepare NAME REV    here: REV's sources into .ab/NAME (git archive; ignored)
#   scripts/ab.sh run TESTLIST [N]    on the device (carry .deps and .ab): builds kbench from every
#                                     .ab/NAME and from the working tree ("new"), then runs TESTLIST
#                                     N times (2) with each, in turn; CSVs and logs into $OUT/ab
#                                     (ab_<name>_<round>.csv), [PERF] lines printed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
case ${1:-} in
  prepare)
    name=${2:?usage: ab.sh prepare NAME REV}
    rev=${3:?usage: ab.sh prepare NAME REV}
    rm -rf ".ab/$name" && mkdir -p ".ab/$name"
    git archive "$rev" | tar -x -C ".ab/$name"
    ln -s ../../.deps ".ab/$name/.deps"
    echo "[ab] .ab/$name = $(git rev-parse --short "$rev")" ;;
  run)
    list=$(realpath "${2:?usage: ab.sh run TESTLIST [N]}")
    rounds=${3:-2}
    out=${OUT:-/tmp/kbench-ab}/ab
    mkdir -p "$out"
    export PATH=/usr/local/cuda/bin:$PATH
    names=()
    for dir in .ab/*/; do [ -d "$dir" ] && names+=("$(basename "$dir")"); done
    names+=(new)
    for name in "${names[@]}"; do
      src=$root/.ab/$name; [ "$name" = new ] && src=$root
      if ! KBENCH_BUILD_DIR=$root/build-ab-$name "$src/scripts/build.sh" >"$out/build_$name.log" 2>&1; then
        echo "[ab] build of $name FAILED"; tail -20 "$out/build_$name.log"; exit 1
      fi
    done
    for r in $(seq 1 "$rounds"); do
      for name in "${names[@]}"; do
        "$root/build-ab-$name/src/app/kbench" --testlist "$list" --output_path "$out/ab_${name}_$r.csv" \
          >"$out/ab_${name}_$r.log" 2>&1 || echo "[ab] $name round $r: exit $?"
        grep -E '^\[PERF\]' "$out/ab_${name}_$r.log" | sed "s/^/$name $r /"
      done
    done ;;
  *) sed -n '2,8p' "$0"; exit 2 ;;
esac
