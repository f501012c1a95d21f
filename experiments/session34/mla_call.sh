#!/usr/bin/env bash
# Session 34's MLA calls (H200): mla_call.sh CALL CANDIDATE [OLD_GPU_TESTS] -- the candidate's MLA GPU
# tests (build/carry/gpu_tests.xz; with OLD_GPU_TESTS also main's, build/carry/gpu_tests_cdd.xz, with
# .ab/bin/cdd.xz) and compute-sanitizer memcheck and racecheck on experiments/session33/sanitize_mla.txt,
# then every carried .ab/bin/*.xz on mla_ab.txt, 3 rounds in turn (scripts/ab.sh run-bin); results
# into $OUT/resultsCALL.tgz.
source "$(dirname "$0")/../session25/common.sh"
call=$1 candidate=$2
R=/tmp/res$call; rm -rf $R; mkdir -p $R
for packed in .ab/bin/*.xz; do unpack "$packed" "/tmp/b/$(basename "$packed" .xz)"; done
tests=("new=$candidate")
unpack build/carry/gpu_tests.xz /tmp/b/gt_new
if [ "${3:-}" = old ]; then unpack build/carry/gpu_tests_cdd.xz /tmp/b/gt_cdd; tests=("cdd=cdd" "${tests[@]}"); fi
for entry in "${tests[@]}"; do
  b=${entry%%=*}
  cp "/tmp/b/${entry#*=}" /work/main/build/src/app/kbench
  timeout 120 /tmp/b/gt_$b --gtest_filter='*Mla*' >"$R/gtest_mla_$b.log" 2>&1
  echo "gtest $b exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$R/gtest_mla_$b.log" | tr '\n' ' ')"
done
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool "/tmp/b/$candidate" --testlist experiments/session33/sanitize_mla.txt >"$R/$tool.log" 2>&1
  echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/$tool.log" | tr '\n' ' ')"
done
echo "before: $(smi)" > $R/clocks.txt
OUT=$R timeout 300 bash scripts/ab.sh run-bin experiments/session34/mla_ab.txt 3 > $R/ab.txt 2>&1; echo "ab exit $?"
echo "after: $(smi)" >> $R/clocks.txt
cat $R/clocks.txt
python3 - "$R" <<'PY'
import csv, glob, collections, sys
rows = collections.defaultdict(list)
for f in sorted(glob.glob(f"{sys.argv[1]}/ab/ab_*.csv")):
    name = f.split("/")[-1].split("_")[1]
    for i, r in enumerate(csv.DictReader(open(f))):
        rows[(i, r["case_tag"], name)].append((float(r["median_time"]) * 1000, r["refcheck_status"]))
for k in sorted(rows):
    print(k, " ".join(f"{t:.1f}" for t, _ in rows[k]), set(s for _, s in rows[k]))
PY
tar czf "$OUT/results$call.tgz" -C $R .
echo "end: $(smi)"
