#!/usr/bin/env bash
# Session 34, call 4 (H200): s34d (s34b with one call site each of stage_q and the segment search, the
# consumers reading the Block in place, one slot a segment parity) its MLA GPU tests and compute-sanitizer;
# then cdd (main), s34a and s34d on experiments/session34/mla_ab.txt, 3 rounds.
source "$(dirname "$0")/../session25/common.sh"
R=/tmp/res4; rm -rf $R; mkdir -p $R
unpack build/carry/gpu_tests.xz /tmp/b/gt_new
for b in cdd s34a s34d; do unpack .ab/bin/$b.xz /tmp/b/$b; done
for b in new; do
  cp /tmp/b/$([ $b = cdd ] && echo cdd || echo s34d) /work/main/build/src/app/kbench
  timeout 120 /tmp/b/gt_$b --gtest_filter='*Mla*' >"$R/gtest_mla_$b.log" 2>&1
  echo "gtest $b exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$R/gtest_mla_$b.log" | tr '\n' ' ')"
done
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool /tmp/b/s34d --testlist experiments/session33/sanitize_mla.txt >"$R/$tool.log" 2>&1
  echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/$tool.log" | tr '\n' ' ')"
done
echo "before: $(smi)" > $R/clocks.txt
OUT=$R timeout 300 bash scripts/ab.sh run-bin experiments/session34/mla_ab.txt 3 > $R/ab.txt 2>&1; echo "ab exit $?"
echo "after: $(smi)" >> $R/clocks.txt
cat $R/clocks.txt
python3 - <<'PY'
import csv, glob, collections
rows = collections.defaultdict(list)
for f in sorted(glob.glob("/tmp/res4/ab/ab_*.csv")):
    name = f.split("/")[-1].split("_")[1]
    for i, r in enumerate(csv.DictReader(open(f))):
        rows[(i, r["case_tag"], name)].append((float(r["median_time"]) * 1000, r["refcheck_status"]))
for k in sorted(rows):
    print(k, " ".join(f"{t:.1f}" for t, _ in rows[k]), set(s for _, s in rows[k]))
PY
tar czf "$OUT/results4.tgz" -C $R .
echo "end: $(smi)"
