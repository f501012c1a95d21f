#!/usr/bin/env bash
# Session 29, call 2: A/B of main and the new merge + 4-CTA head-64 decode (ab2.txt, 2 rounds), then
# with the new binary: ncu of the merge and a chunk sweep for the planner's merge constants.
source "$(dirname "$0")/../session25/common.sh"
D=experiments/session29
bash $D/../session28/ab_rows.sh $D/ab2.txt 2
K=$(ls /tmp/kbench-ab-bin/new* | head -1); echo "new binary: $K"
for c in default 0 128 256 384 512 768 1024 1536 2048 3072; do
  rm -f /tmp/s.csv
  if [ $c = default ]; then $K --testlist $D/sweep2.txt --output_path /tmp/s.csv >/tmp/s.log 2>&1
  else KBENCH_DECODE_CHUNK=$c $K --testlist $D/sweep2.txt --output_path /tmp/s.csv >/tmp/s.log 2>&1; fi
  echo "chunk $c exit $?"; sed "s/^/$c,/" /tmp/s.csv >>$OUT/sweep.csv
done
M=gpu__time_duration.sum,launch__grid_size
for c in default 512; do
  if [ $c = default ]; then unset KBENCH_DECODE_CHUNK; else export KBENCH_DECODE_CHUNK=$c; fi
  timeout 100 ncu --clock-control none --cache-control none --metrics $M --csv $K --testlist $D/ncu1_fa2tc.txt >>$OUT/ncu.csv 2>/dev/null; echo "ncu $c exit $?"
done
echo "end: $(smi)"
