#!/usr/bin/env bash
# Session 41, call 4 (H200): m41 = main (3e94e3a); fcn41 = the producer fix as landed (every producer
# thread waits for every buffer and, by its warp's lane 0, arrives on the full barrier of a TMA-loaded
# one: arrive_seen_free); fc41 = fcn41 + 128 B L2 promotion of the bf16 transposed kernel's maps.
# 1. hang.txt, a line a run (graphs): fc41 twice, fcn41 once, m41 once (15 s each).
# 2. ab41.txt: m41, fcn41, fc41, two rounds.  3. racecheck, memcheck (fc41).
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=$OUT/res4; mkdir -p $R/hang $R/ab
unpack_bins
n=0
grep -v '^#' experiments/session41/hang.txt | while read -r line; do
  n=$((n + 1)); echo "$line" > /tmp/h$n.txt
  for run in fc41_a fc41_b fcn41_a m41_a; do
    timeout 15 /tmp/b/${run%_*} --testlist /tmp/h$n.txt > $R/hang/${n}_$run.log 2>&1
    echo "hang line $n $run exit $?: $(grep -E '^\[PERF\]' $R/hang/${n}_$run.log | awk '{print $6, $(NF-1)}')"
  done
done
AB=$R/ab RUN_LIMIT=40 list=experiments/session41/ab41.txt
for r in 1 2; do run_as m41 $r m41; run_as fcn41 $r fcn41; run_as fc41 $r fc41; done
python3 experiments/session35/table.py $R/ab

sanitize racecheck fc41 experiments/session41/sanitize_producers.txt racecheck.log 130
sanitize memcheck fc41 experiments/session41/sanitize_producers.txt memcheck.log 90
cd $R && tar czf $OUT/res4.tgz . && echo "end: $(smi)"
