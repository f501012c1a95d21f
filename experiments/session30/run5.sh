#!/usr/bin/env bash
# Session 30, call 5: where softmax 256 x 128256 fp32 (issue 16: 2.575 TB/s, target 2.8) loses to a
# copy: ncu's full set on one launch of kbench's row kernel (clock locked to base, cache control as
# ncu's default), and the DRAM bytes and duration of three launches at unlocked clocks.
source "$(dirname "$0")/../session25/common.sh"
unpack .ab/bin/new.xz /tmp/b/kbench; K=/tmp/b/kbench
L="--routine softmax --batch_size 256 --vocab_size 128256 --input_dtype float32 --backends cuda -n 5 -d 1"
timeout 150 ncu --set full -k regex:filter_kernel --launch-skip 2 --launch-count 1 $K $L >"$OUT/ncu_softmax_full.txt" 2>&1
echo "full exit $?"
timeout 100 ncu --clock-control none --cache-control none -k regex:filter_kernel --launch-skip 2 --launch-count 3 \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_elapsed.avg.per_second,sm__warps_active.avg.pct_of_peak_sustained_active \
  --csv $K $L >"$OUT/ncu_softmax_metrics.csv" 2>/dev/null
echo "metrics exit $?"
echo "end: $(smi)"
