#!/usr/bin/env bash
# Session 29, call 10: ncu sections (speed of light, warp states, scheduler, tensor pipes) of one
# launch of kbench's fa3 and of FlashInfer's fa3 on the two prefill points still below FlashInfer
# (head 256 causal, causal random lengths at batch 16): what the next session starts from.
source "$(dirname "$0")/../session25/common.sh"
D=experiments/session29
unpack .ab/bin/new.xz /tmp/b/kbench; K=/tmp/b/kbench
S="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section Occupancy --section LaunchStats"
i=0
for line in 1 3; do
  sed -n ${line}p $D/ncu7.txt | sed 's/--backends fa3 flashinfer_fa3 cudnn/--backends fa3 flashinfer_fa3/' > /tmp/l.txt
  for k in fa3_prefill_kernel PrefillWithKVCacheKernel; do
    i=$((i+1))
    timeout 60 ncu --clock-control none -k regex:$k --launch-skip 1 --launch-count 1 $S $K --testlist /tmp/l.txt > $OUT/ncu_${line}_$k.txt 2>&1
    echo "line $line $k exit $?"
  done
done
echo "end: $(smi)"
