#!/usr/bin/env bash
# Session 41, call 2 (H200): the random-length row's hang. dbg41 = main + mbar_timeout_debug.patch
# (the bf16 transposed kernel's waits print their barrier and trap after 2 s); fx41 = main + the
# producer fix (only thread 0 waits on the ring's empty barriers; gathered tiles pass its wait on by a
# named barrier). The row alone with graphs: dbg41 twice, fx41 eight times; then the memory-bound row
# (fa3 + FlashInfer) with fx41 and m41 (main), two rounds.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session36/steps.sh"
unpack_bins
R=$OUT/res2; mkdir -p $R
L=experiments/session40/random_len.txt
head -3 experiments/session40/final_ab.txt > /tmp/mb.txt
go() {  # NAME LIMIT BIN LIST
  local t0=$(date +%s.%N)
  timeout $2 /tmp/b/$3 --testlist $4 --output_path $R/$1.csv > $R/$1.log 2>&1
  local rc=$?
  echo "$1 exit $rc in $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s: $(grep -E '^\[PERF\]' $R/$1.log | awk '{print $2, $6, $(NF-1)}' | tr '\n' ';')"
  [ $rc -ne 0 ] && { grep -c "mbar timeout" $R/$1.log; grep "mbar timeout" $R/$1.log | sort -t' ' -k4,4 -u | head -12; tail -3 $R/$1.log; }
}
go dbg_1 30 dbg41 $L
go dbg_2 30 dbg41 $L
for i in 1 2 3 4 5 6 7 8; do go fx_$i 20 fx41 $L; done
go mb_fx_1 30 fx41 /tmp/mb.txt
go mb_m_1 30 m41 /tmp/mb.txt
go mb_m_2 30 m41 /tmp/mb.txt
go mb_fx_2 30 fx41 /tmp/mb.txt
cd $R && tar czf $OUT/res2.tgz . && echo "end: $(smi)"
