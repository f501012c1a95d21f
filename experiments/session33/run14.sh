#!/usr/bin/env bash
# Session 33, call 14 (H200): the final code (.ab/bin/final3.xz: the transposed kernel on balanced schedules too) on bench/attention/mla/mla_fp8.txt
# into bench/results/h200/mla/session33/, 26a53dc (final) and main (new4 = 67c42b0) on the same list after it; the MLA
# GPU tests and compute-sanitizer on the final code.
source "$(dirname "$0")/../session25/common.sh"
for b in final3 final new4; do unpack .ab/bin/$b.xz /tmp/b/$b; done
unpack build/carry/gpu_tests.xz /tmp/b/gt
cp /tmp/b/final3 /work/main/build/src/app/kbench
R=/tmp/res14; rm -rf $R; mkdir -p $R
timeout 300 /tmp/b/gt --gtest_filter='*Mla*' >"$R/gtest_mla.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$R/gtest_mla.log" | tr '\n' ' ')"
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool /tmp/b/final3 --testlist experiments/session33/sanitize_mla.txt >"$R/$tool.log" 2>&1
  echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/$tool.log" | tr '\n' ' ')"
done
echo "before: $(smi)" > $R/clocks.txt
timeout 200 /tmp/b/final3 --testlist bench/attention/mla/mla_fp8.txt --output_path $R/mla_fp8.csv -v >$R/mla_fp8.log 2>&1; echo "final3 exit $?"
timeout 200 /tmp/b/final --testlist bench/attention/mla/mla_fp8.txt --output_path $R/prev_mla_fp8.csv >$R/prev_mla_fp8.log 2>&1; echo "final exit $?"
echo "between: $(smi)" >> $R/clocks.txt
timeout 200 /tmp/b/new4 --testlist bench/attention/mla/mla_fp8.txt --output_path $R/main_mla_fp8.csv >$R/main_mla_fp8.log 2>&1; echo "main exit $?"
echo "after: $(smi)" >> $R/clocks.txt
cat $R/clocks.txt
python3 - <<'PY'
import csv
for f in ["mla_fp8", "prev_mla_fp8", "main_mla_fp8"]:
    for r in csv.DictReader(open(f"/tmp/res14/{f}.csv")):
        print(f, r["case_tag"], r["backend"], f'{float(r["median_time"]) * 1000:.1f} us', f'{float(r["tb_per_sec"]):.3f} TB/s', r["refcheck_status"])
PY
tar czf "$OUT/results14.tgz" -C $R .
echo "end: $(smi)"
