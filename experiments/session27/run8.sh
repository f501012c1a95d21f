#!/usr/bin/env bash
# Session 27, call 8: racecheck reports hazards on finish_segment's row sums with the seesaw
# consumers widening fp8 tiles (call 7): each probe line alone (bf16 seesaw with random lengths,
# fp8 seesaw with fixed lengths, fp8 with one 64-row block).
source "$(dirname "$0")/../session25/common.sh"
KB=/tmp/b/kbench
unpack .ab/bin/fi.xz "$KB"
n=0
while IFS= read -r line; do
  n=$((n + 1))
  echo "$line" > /tmp/b/line$n.txt
  timeout 100 compute-sanitizer --tool racecheck --print-limit 4 "$KB" --testlist /tmp/b/line$n.txt >"$OUT/probe$n.log" 2>&1
  echo "line $n exit $?: $(grep -E 'RACECHECK SUMMARY' "$OUT/probe$n.log")"
done < experiments/session27/racecheck_seesaw_probe.txt
echo "end: $(smi)"
