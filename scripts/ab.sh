#!/usr/bin/env bash
# A/B timing of builds in one device call (the GPU is power-capped and drifts by a few percent
# between calls, so only rows of one call compare).
#   scripts/ab.sh prepare NAME REV    here: REV's sources into .ab/NAME (git archive; ignored)
#   scripts/ab.sh run TESTLIST [N]    on the device (carry .deps and .ab): builds kbench from every
#                                     .ab/NAME and from the working tree ("new"), then runs TESTLIST
#                                     N times (2) with each, in turn; CSVs and logs into $OUT/ab
#                                     (ab_<name>_<round>.csv), [PERF] lines printed.
#   scripts/ab.sh pack NAME [BINARY]  here: a kbench binary built here (build/src/app/kbench) into
#                                     .ab/bin/NAME.xz (a device call then builds nothing: the
#                                     device has the CUDA libraries; ~10 MB a binary, carry .ab/bin)
#   scripts/ab.sh run-bin TESTLIST [N]  on the device: the packed binaries, N rounds in turn, as run
set -euo pipefail
shopt -s nullglob
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
binaries=()  # NAME=PATH of each kbench to compare
# Runs TESTLIST with every binary in turn, ROUNDS times, into OUT (ab_<name>_<round>.csv and .log).
rounds() {
  local list=$1 count=$2 out=$3 entry name r
  for r in $(seq 1 "$count"); do
    for entry in "${binaries[@]}"; do
      name=${entry%%=*}
      "${entry#*=}" --testlist "$list" --output_path "$out/ab_${name}_$r.csv" >"$out/ab_${name}_$r.log" 2>&1 ||
        echo "[ab] $name round $r: exit $?"
      grep -E '^\[PERF\]' "$out/ab_${name}_$r.log" | sed "s/^/$name $r /" || true
    done
  done
}
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
    for dir in .ab/*/; do [ -d "$dir" ] && [ "$dir" != .ab/bin/ ] && names+=("$(basename "$dir")"); done
    names+=(new)
    for name in "${names[@]}"; do
      src=$root/.ab/$name; [ "$name" = new ] && src=$root
      if ! KBENCH_BUILD_DIR=$root/build-ab-$name "$src/scripts/build.sh" >"$out/build_$name.log" 2>&1; then
        echo "[ab] build of $name FAILED"; tail -20 "$out/build_$name.log"; exit 1
      fi
    done
    for name in "${names[@]}"; do binaries+=("$name=$root/build-ab-$name/src/app/kbench"); done
    rounds "$list" "$rounds" "$out" ;;
  pack)
    name=${2:?usage: ab.sh pack NAME [BINARY]}
    binary=${3:-build/src/app/kbench}
    mkdir -p .ab/bin
    xz -T0 -5 -c "$binary" >".ab/bin/$name.xz"
    echo "[ab] .ab/bin/$name.xz: $(du -h ".ab/bin/$name.xz" | cut -f1) ($binary)" ;;
  run-bin)
    list=$(realpath "${2:?usage: ab.sh run-bin TESTLIST [N]}")
    out=${OUT:-/tmp/kbench-ab}/ab
    mkdir -p "$out" /tmp/kbench-ab-bin
    for packed in .ab/bin/*.xz; do
      name=$(basename "$packed" .xz)
      xz -dc "$packed" >"/tmp/kbench-ab-bin/$name" && chmod +x "/tmp/kbench-ab-bin/$name"
      binaries+=("$name=/tmp/kbench-ab-bin/$name")
    done
    [ ${#binaries[@]} -gt 0 ] || { echo "[ab] no .ab/bin/*.xz (ab.sh pack)"; exit 2; }
    rounds "$list" "${3:-2}" "$out" ;;
  *) sed -n '2,12p' "$0"; exit 2 ;;
esac
