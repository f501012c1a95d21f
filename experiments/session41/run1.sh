#!/usr/bin/env bash
# Session 41, call 1 (H200): session 40's call 11 saw f40 (128 B L2 promotion for the bf16 transposed
# kernel's maps) run past 30 s on the random-length row. f41 = main (3e94e3a) + l2_promotion_128b.patch,
# m41 = main. The row alone (fa3 only): direct launches, then graphs; then the first two rows of
# final_ab.txt (with FlashInfer) with each binary. Wall time of each run.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session36/steps.sh"
unpack_bins
R=$OUT/res1; mkdir -p $R
L=experiments/session40/random_len.txt
sed 's/--case_tag/--no_cuda_graph -n 3 -d 1 --case_tag/' $L > /tmp/direct.txt
head -4 experiments/session40/final_ab.txt > /tmp/two.txt
go() {  # NAME LIMIT BIN LIST
  local t0=$(date +%s.%N)
  timeout $2 /tmp/b/$3 --testlist $4 --output_path $R/$1.csv > $R/$1.log 2>&1
  local rc=$?
  echo "$1 exit $rc in $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s: $(grep -E '^\[PERF\]' $R/$1.log | awk '{print $2, $6, $(NF-1)}' | tr '\n' ';')"
  [ $rc -ne 0 ] && tail -4 $R/$1.log
}
go f41_direct 20 f41 /tmp/direct.txt
go m41_direct 20 m41 /tmp/direct.txt
go f41_graph 25 f41 $L
go m41_graph 25 m41 $L
go m41_two_1 40 m41 /tmp/two.txt
go f41_two_1 40 f41 /tmp/two.txt
go f41_two_2 40 f41 /tmp/two.txt
go m41_two_2 40 m41 /tmp/two.txt
echo "end: $(smi)"
