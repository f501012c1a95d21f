#!/usr/bin/env bash
# Session 31, call 1 (H200): softmax A/B main (f2b2049) vs the own-vector softmax, two rounds each
# order, copy bandwidth beside; sampling GPU tests; memcheck/racecheck on the softmax lines; ncu
# instruction counts of both kernels at 256 x 128256.
source "$(dirname "$0")/../session25/common.sh"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv
unpack .ab/bin/main.xz /tmp/b/main; unpack .ab/bin/new.xz /tmp/b/new
unpack build/carry/gpu_tests.xz /tmp/b/gt
cp /tmp/b/new /work/main/build/src/app/kbench
bash bench/norm/copy_bandwidth.sh
nvidia-smi dmon -s pc -d 1 >"$OUT/dmon.txt" 2>&1 & dmon=$!
for r in 1 2; do
  for b in main new; do [ $r = 2 ] && b=$([ $b = main ] && echo new || echo main)
    /tmp/b/$b --testlist experiments/session31/softmax.txt --output_path "$OUT/${b}_$r.csv" >"$OUT/${b}_$r.log" 2>&1 || echo "$b $r exit $?"
  done
done
kill $dmon
python3 - <<'PY'
import csv, glob, os
out = os.environ.get("OUT", "/tmp/out")
for f in sorted(glob.glob(f"{out}/*_[12].csv")):
    for r in csv.DictReader(open(f)):
        print(os.path.basename(f)[:-4], r["case_tag"], r["backend"], r["median_time"], r["tb_per_sec"], r["refcheck_status"], r["sm_clock_mhz"], r["power_w"])
PY
timeout 150 /tmp/b/gt --gtest_filter='*Sampling*:*Softmax*' >"$OUT/gtest_sampling.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$OUT/gtest_sampling.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$OUT/gtest_sampling.log" | head
grep softmax bench/racecheck_sampling_cases.txt >/tmp/san.txt
echo '--routine softmax --batch_size 3 --vocab_size 128256 --input_dtype bfloat16 --backends cuda --no_cuda_graph --use_cuda_events -n 1 -d 0' >>/tmp/san.txt
echo '--routine softmax --batch_size 2 --vocab_size 1001 --input_dtype float16 --backends cuda --no_cuda_graph --use_cuda_events -n 1 -d 0' >>/tmp/san.txt
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool /tmp/b/new --testlist /tmp/san.txt --refcheck >"$OUT/$tool.log" 2>&1
  echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/$tool.log" | tr '\n' ' ')"
done
for b in main new; do
  timeout 100 ncu --clock-control none -k regex:filter_kernel -c 1 --metrics smsp__inst_executed.sum,gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed \
    /tmp/b/$b --routine softmax --batch_size 256 --vocab_size 128256 --input_dtype float32 --backends cuda --no_cuda_graph --use_cuda_events -n 1 -d 0 >"$OUT/ncu_$b.txt" 2>&1
  echo "ncu $b: $(grep -E 'inst_executed|duration|dram__bytes|sm__throughput' "$OUT/ncu_$b.txt" | awk '{print $1, $(NF-1), $NF}' | tr '\n' ' ')"
done
cd "$OUT" && tar czf results.tgz *.csv *.log *.txt && rm -f *.csv *.log *.txt && ls
echo "end: $(smi)"
