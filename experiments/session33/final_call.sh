#!/usr/bin/env bash
# Session 33's closing calls (H200): final_call.sh CALL NEW PREV -- the MLA GPU tests and compute-sanitizer
# on .ab/bin/NEW.xz, then NEW on bench/attention/mla/mla_fp8.txt (into mla_fp8.csv), PREV
# (prev_mla_fp8.csv) and main before the session (new4 = 67c42b0, main_mla_fp8.csv) on the same list;
# results into $OUT/resultsCALL.tgz.
source "$(dirname "$0")/../session25/common.sh"
call=$1 new=$2 prev=$3
for b in "$new" "$prev" new4; do unpack ".ab/bin/$b.xz" "/tmp/b/$b"; done
unpack build/carry/gpu_tests.xz /tmp/b/gt
cp "/tmp/b/$new" /work/main/build/src/app/kbench
R=/tmp/res$call; rm -rf $R; mkdir -p $R
timeout 300 /tmp/b/gt --gtest_filter='*Mla*' >"$R/gtest_mla.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$R/gtest_mla.log" | tr '\n' ' ')"
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool "/tmp/b/$new" --testlist experiments/session33/sanitize_mla.txt >"$R/$tool.log" 2>&1
  echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/$tool.log" | tr '\n' ' ')"
done
echo "before: $(smi)" > $R/clocks.txt
timeout 200 "/tmp/b/$new" --testlist bench/attention/mla/mla_fp8.txt --output_path $R/mla_fp8.csv -v >$R/mla_fp8.log 2>&1; echo "$new exit $?"
timeout 200 "/tmp/b/$prev" --testlist bench/attention/mla/mla_fp8.txt --output_path $R/prev_mla_fp8.csv >$R/prev_mla_fp8.log 2>&1; echo "$prev exit $?"
echo "between: $(smi)" >> $R/clocks.txt
timeout 200 /tmp/b/new4 --testlist bench/attention/mla/mla_fp8.txt --output_path $R/main_mla_fp8.csv >$R/main_mla_fp8.log 2>&1; echo "main exit $?"
echo "after: $(smi)" >> $R/clocks.txt
cat $R/clocks.txt
python3 - "$R" <<'PY'
import csv, sys
for f in ["mla_fp8", "prev_mla_fp8", "main_mla_fp8"]:
    for r in csv.DictReader(open(f"{sys.argv[1]}/{f}.csv")):
        print(f, r["case_tag"], r["backend"], f'{float(r["median_time"]) * 1000:.1f} us', f'{float(r["tb_per_sec"]):.3f} TB/s', r["refcheck_status"])
PY
tar czf "$OUT/results$call.tgz" -C $R .
echo "end: $(smi)"
