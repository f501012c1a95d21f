#!/usr/bin/env bash
# Session 32, call 2 (H200): kbench's GEMM with clusters of 2 (B multicast) and one tile-wide wgmma
# (.ab/bin/new.xz; the peer's stage releases now without a cluster-scope fence) against main (.ab/bin/main.xz), in both orders, with the cluster heuristic, forced
# off (KBENCH_WGMMA_GEMM_CLUSTER=1) and forced on (=2); the GEMM GPU tests; memcheck / racecheck on
# small clustered lines.
source "$(dirname "$0")/../session25/common.sh"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
unpack .ab/bin/main.xz /tmp/b/main; unpack .ab/bin/new.xz /tmp/b/new
unpack build/carry/gpu_tests.xz /tmp/b/gt
cp /tmp/b/new /work/main/build/src/app/kbench
R=/tmp/res; mkdir -p $R
nvidia-smi dmon -s pc -d 1 >"$R/dmon.txt" 2>&1 & dmon=$!
run() {  # binary, tag, cluster env value (empty: the heuristic)
  KBENCH_WGMMA_GEMM_CLUSTER=$3 /tmp/b/$1 --testlist experiments/session32/gemm_ab.txt --output_path "$R/gemm_$2.csv" >"$R/gemm_$2.log" 2>&1 || echo "$2 exit $?"
}
run new new_1 ""; run main main_1 ""; run new c1_1 1
run new c1_2 1; run main main_2 ""; run new new_2 ""
kill $dmon
python3 - <<'PY'
import csv, glob, os
rows = {}
for f in sorted(glob.glob("/tmp/res/gemm_*.csv")):
    e = os.path.basename(f)[5:-4]
    for r in csv.DictReader(open(f)):
        rows.setdefault((r["case_tag"], r["backend"]), []).append(f'{e} {float(r["median_time"]) * 1000:.1f} {r["refcheck_status"]} {r["sm_clock_mhz"]}')
for k in sorted(rows): print(*k, " | ".join(rows[k]))
PY
timeout 240 /tmp/b/gt --gtest_filter='KbenchGemm*:CutlassGemm.KbenchRefchecksEndToEnd' >"$R/gtest_gemm.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$R/gtest_gemm.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$R/gtest_gemm.log" | head -8
for tool in memcheck racecheck; do
  KBENCH_WGMMA_GEMM_TILES=128x256 KBENCH_WGMMA_GEMM_CLUSTER=2 timeout 100 compute-sanitizer --tool $tool /tmp/b/new --testlist experiments/session32/sanitize_cases.txt >"$R/$tool.log" 2>&1
  echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/$tool.log" | tr '\n' ' ') refcheck passed: $(grep -c 'passed' "$R/$tool.log")"
done
tar czf "$OUT/results2.tgz" -C $R .
echo "end: $(smi)"
