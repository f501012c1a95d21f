#!/usr/bin/env bash
# One benchmark runner for every family: bench/run.sh SET OUTPUT_DIR runs each testlist in
# bench/SET/ (*.txt: kbench --testlist X --output_path OUTPUT_DIR/X.csv, its log beside it) and
# each hook script there (*.sh: extra measurements, sourced with KBENCH, OUT and run_testlist set),
# with nvidia-smi dmon sampling the SM clock and power into OUTPUT_DIR/dmon.txt. Every command is
# printed before it runs ("$ kbench ..."). Sets: norm, quantization, rope, attention/decode, attention/prefill, timing,
# clocks, sweep, multigpu, flashinfer (kbench's kernels beside FlashInfer's own), sampling (the
# reference's sampling lines and the issue's targets), sampling/grid (batch x vocabulary x dtype x
# input law, ~30 minutes).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
set_name=${1:?usage: bench/run.sh SET OUTPUT_DIR (sets: the folders under bench/ holding testlists)}
OUT=${2:?usage: bench/run.sh SET OUTPUT_DIR}
KBENCH=${KBENCH:-build/src/app/kbench}
[ -d "bench/$set_name" ] || { echo "bench/run.sh: no benchmark set bench/$set_name" >&2; exit 2; }
mkdir -p "$OUT"
run_testlist() {  # run_testlist FILE: one kbench testlist, its CSV and log named after the file
  local name
  name=$(basename "$1" .txt)
  echo "\$ kbench --testlist $1 --output_path $name.csv"
  "$KBENCH" --testlist "$1" --output_path "$OUT/$name.csv" 2>&1 | tee "$OUT/$name.log"
}
dmon=
if command -v nvidia-smi >/dev/null; then
  nvidia-smi dmon -s pc -d 1 >"$OUT/dmon.txt" 2>&1 &
  dmon=$!
fi
status=0
for testlist in bench/"$set_name"/*.txt; do
  [ -e "$testlist" ] || continue
  run_testlist "$testlist" || status=1
done
for hook in bench/"$set_name"/*.sh; do
  [ -e "$hook" ] || continue
  # shellcheck source=/dev/null
  source "$hook" || status=1
done
[ -n "$dmon" ] && kill "$dmon"
exit $status
