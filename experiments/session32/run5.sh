#!/usr/bin/env bash
# Session 32, call 5 (H200): the groupwise consumers in 64-wide parts, two temporaries, each part
# promoted while the next runs (.ab/bin/parts.xz) against the landed clustered build (new) and main,
# orders parts, new, main, main, new, parts; the GEMM GPU tests and memcheck / racecheck on the
# parts build.
source "$(dirname "$0")/../session25/common.sh"
for b in main new parts; do unpack .ab/bin/$b.xz /tmp/b/$b; done
unpack build/carry/gpu_tests.xz /tmp/b/gt
cp /tmp/b/parts /work/main/build/src/app/kbench
R=/tmp/res; mkdir -p $R
nvidia-smi dmon -s pc -d 1 >"$R/dmon.txt" 2>&1 & dmon=$!
run() { /tmp/b/$1 --testlist experiments/session32/groupwise.txt --output_path "$R/gw_$1_$2.csv" >"$R/gw_$1_$2.log" 2>&1 || echo "$1 $2 exit $?"; }
run parts 1; run new 1; run main 1; run main 2; run new 2; run parts 2
kill $dmon
python3 - <<'PY'
import csv, glob, os
rows = {}
for f in sorted(glob.glob("/tmp/res/gw_*.csv")):
    e = os.path.basename(f)[3:-4]
    for r in csv.DictReader(open(f)):
        rows.setdefault((r["case_tag"], r["m"] if "m" in r else "", r["backend"]), []).append(f'{e} {float(r["median_time"]) * 1000:.1f} {r["refcheck_status"][:4]} {r["sm_clock_mhz"]}')
for k in sorted(rows): print(*k, " | ".join(rows[k]))
PY
timeout 240 /tmp/b/gt --gtest_filter='KbenchGemm*:CutlassGemm.KbenchRefchecksEndToEnd' >"$R/gtest_gemm.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$R/gtest_gemm.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$R/gtest_gemm.log" | head -8
for tool in memcheck racecheck; do
  KBENCH_WGMMA_GEMM_TILES=128x256 KBENCH_WGMMA_GEMM_CLUSTER=2 timeout 100 compute-sanitizer --tool $tool /tmp/b/parts --testlist experiments/session32/sanitize_cases.txt >"$R/$tool.log" 2>&1
  echo "$tool 128x256 exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/$tool.log" | tr '\n' ' ') refcheck passed: $(grep -c 'passed' "$R/$tool.log")"
  KBENCH_WGMMA_GEMM_TILES=64x128 timeout 100 compute-sanitizer --tool $tool /tmp/b/parts --testlist experiments/session32/sanitize_cases.txt >"$R/${tool}_64x128.log" 2>&1
  echo "$tool 64x128 exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/${tool}_64x128.log" | tr '\n' ' ') refcheck passed: $(grep -c 'passed' "$R/${tool}_64x128.log")"
done
tar czf "$OUT/results5.tgz" -C $R .
echo "end: $(smi)"
