#!/usr/bin/env bash
# Session 27, call 15: seesaw fp8 tiles widened in two parts too (chunks 0..3 by the producer, 4..8 by
# the owning warpgroup: fi) against 93bbf10 (p0: all by the warpgroup), two rounds; racecheck and memcheck
# on fa3's fp8 lines with fi.
source "$(dirname "$0")/../session25/common.sh"
scripts/ab.sh run-bin experiments/session27/ab_fp8.txt 2
for tool in racecheck memcheck; do
  timeout 150 compute-sanitizer --tool $tool --print-limit 10 /tmp/kbench-ab-bin/fi --testlist experiments/session27/racecheck_mla_fp8.txt >"$OUT/$tool.log" 2>&1
  echo "$tool exit $?: $(grep -E 'SUMMARY|Backends' "$OUT/$tool.log" | tr '\n' ' ')"
done
echo "end: $(smi)"
