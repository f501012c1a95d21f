#!/usr/bin/env bash
# Session 41, call 3 (H200): m41 = main (3e94e3a), fx41 = the producer fix in all four fa3 MLA
# producers (only thread 0 waits on the empty barriers; kProducerBarrier before tiles every producer
# thread writes), fp41 = fx41 + 128 B L2 promotion of the bf16 transposed kernel's maps.
# 1. hang.txt, a line a run (graphs): fp41 twice, fx41 once, m41 once (15 s each).
# 2. ab41.txt: m41, fx41, fp41, two rounds.  3. racecheck, memcheck (fp41): the GPU tests in call 4.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=$OUT/res3; mkdir -p $R/hang $R/ab
unpack_bins
n=0
grep -v '^#' experiments/session41/hang.txt | while read -r line; do
  n=$((n + 1)); echo "$line" > /tmp/h$n.txt
  for run in fp41_a fp41_b fx41_a m41_a; do
    timeout 15 /tmp/b/${run%_*} --testlist /tmp/h$n.txt > $R/hang/${n}_$run.log 2>&1
    echo "hang line $n $run exit $?: $(grep -E '^\[PERF\]' $R/hang/${n}_$run.log | awk '{print $6, $(NF-1)}')"
  done
done
AB=$R/ab RUN_LIMIT=40 list=experiments/session41/ab41.txt
for r in 1 2; do run_as m41 $r m41; run_as fx41 $r fx41; run_as fp41 $r fp41; done
python3 experiments/session35/table.py $R/ab

sanitize racecheck fp41 experiments/session41/sanitize_producers.txt racecheck.log 130
sanitize memcheck fp41 experiments/session41/sanitize_producers.txt memcheck.log 90
cd $R && tar czf $OUT/res3.tgz . && echo "end: $(smi)"
