#!/usr/bin/env bash
# Session 29, call 1: where the decode losses of the grid go (one KV head at 131072, head 64, batch 1).
source "$(dirname "$0")/../session25/common.sh"
unpack .ab/bin/main.xz /tmp/b/kbench
K=/tmp/b/kbench; D=experiments/session29
$K --testlist $D/diag1.txt --output_path $OUT/rows.csv >$OUT/diag1.log 2>&1; echo "diag1 exit $?"
for c in 512 768 1024 2048 4096; do
  rm -f /tmp/chunk.csv; KBENCH_DECODE_CHUNK=$c $K --testlist $D/chunk1.txt --output_path /tmp/chunk.csv >/tmp/chunk.log 2>&1
  echo "chunk $c exit $?"; grep PERF /tmp/chunk.log | sed "s/^/$c /"; sed "s/^/$c,/" /tmp/chunk.csv >>$OUT/chunks.csv
done
M=gpu__time_duration.sum,dram__bytes_read.sum,launch__grid_size,launch__block_size
timeout 200 ncu --clock-control none --cache-control none --metrics $M --csv $K --testlist $D/ncu1.txt >$OUT/ncu_default.csv 2>$OUT/ncu.err; echo "ncu exit $?"
for c in 512 1024; do
  KBENCH_DECODE_CHUNK=$c timeout 60 ncu --clock-control none --cache-control none --metrics $M --csv $K --testlist $D/ncu1_fa2tc.txt >>$OUT/ncu_chunks.csv 2>>$OUT/ncu.err; echo "ncu $c exit $?"
done
grep PERF $OUT/diag1.log
echo "end: $(smi)"
