#!/usr/bin/env bash
# Session 29, calls 4 and 5: the decode grid with the new binary (cuDNN and FlashInfer in the same
# run), then chunk sweeps where the plan changed: `run4.sh SWEEP_LIST "CHUNKS"` (call 4: sweep4.txt
# "default 0 1024 2048 2560 4096 7296 8192"; call 5: sweep5.txt "default 1024 4096 8192 16384").
source "$(dirname "$0")/../session25/common.sh"
D=experiments/session29
unpack .ab/bin/new.xz /tmp/b/kbench; K=/tmp/b/kbench
$K --testlist bench/attention_grid/decode_grid.txt --output_path $OUT/decode_grid.csv >$OUT/decode_grid.log 2>&1; echo "grid exit $?"
grep -E "Testlist summary|Backends:" $OUT/decode_grid.log
echo "mid: $(smi)"
for c in $2; do
  rm -f /tmp/s.csv
  if [ $c = default ]; then $K --testlist $D/$1 --output_path /tmp/s.csv >/tmp/s.log 2>&1
  else KBENCH_DECODE_CHUNK=$c $K --testlist $D/$1 --output_path /tmp/s.csv >/tmp/s.log 2>&1; fi
  echo "chunk $c exit $?"; sed "s/^/$c,/" /tmp/s.csv >>$OUT/sweep.csv
done
echo "end: $(smi)"
