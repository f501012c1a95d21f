#!/usr/bin/env bash
# Session 29, call 11: the MMA work of kbench's fa3 and FlashInfer's fa3 on the same two points
# (instruction counts of one launch each): does fa3 compute more tiles, or the same ones slower?
source "$(dirname "$0")/../session25/common.sh"
D=experiments/session29
unpack .ab/bin/new.xz /tmp/b/kbench; K=/tmp/b/kbench
M=sm__inst_executed_pipe_tensor_op_gmma.sum,smsp__inst_executed.sum,sm__cycles_elapsed.max,gpu__time_duration.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed
for line in 1 3; do
  sed -n ${line}p $D/ncu7.txt | sed 's/--backends fa3 flashinfer_fa3 cudnn/--backends fa3 flashinfer_fa3/' > /tmp/l.txt
  for k in fa3_prefill_kernel PrefillWithKVCacheKernel; do
    timeout 40 ncu --clock-control none -k regex:$k --launch-skip 1 --launch-count 1 --metrics $M $K --testlist /tmp/l.txt 2>&1 | grep -E "sm__|smsp__|gpu__" | sed "s/^/line $line $k: /"
  done
done
echo "end: $(smi)"
