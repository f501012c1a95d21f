#!/usr/bin/env bash
# Session 33, call 5 (H200): the transposed kernel, warpgroups alternating tiles, keys permuted for
# conflict-free raw loads and V stores (mla4), against call 1's (mla1) and main (new4); the MLA GPU
# tests, compute-sanitizer and Nsight Compute's shared-memory figures on mla4.
source "$(dirname "$0")/../session25/common.sh"
for b in mla4 mla1 new4; do unpack .ab/bin/$b.xz /tmp/b/$b; done
unpack build/carry/gpu_tests.xz /tmp/b/gt
cp /tmp/b/mla4 /work/main/build/src/app/kbench
R=/tmp/res5; rm -rf $R; mkdir -p $R
timeout 300 /tmp/b/gt --gtest_filter='*Mla*' >"$R/gtest_mla.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$R/gtest_mla.log" | tr '\n' ' ')"
grep -E '^\[  FAILED|Failure|differ' "$R/gtest_mla.log" | head -12
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool /tmp/b/mla4 --testlist experiments/session33/sanitize_mla.txt >"$R/$tool.log" 2>&1
  echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/$tool.log" | tr '\n' ' ')"
done
run() { timeout 120 /tmp/b/$1 --testlist experiments/session33/mla_fp8.txt --output_path "$R/$1_$2.csv" >"$R/$1_$2.log" 2>&1 || echo "$1 $2 exit $?"; }
run mla4 1; run mla1 1; run new4 1; run new4 2; run mla1 2; run mla4 2
python3 - <<'PY'
import csv, glob, os
rows = {}
for f in sorted(glob.glob("/tmp/res5/*.csv")):
    e = os.path.basename(f)[:-4]
    for r in csv.DictReader(open(f)):
        rows.setdefault((r["case_tag"], r["backend"]), []).append(f'{e} {float(r["median_time"]) * 1000:.1f}{"" if r["refcheck_status"] == "passed" else " " + r["refcheck_status"]}')
for k in sorted(rows): print(*k, " | ".join(rows[k]))
PY
L="--routine BatchMLAPagedAttentionWrapper --backends fa3 --page_size 64 --batch_size 128 --s_qo 1 --s_kv 8192 --num_qo_heads 16 --num_kv_heads 1 --head_dim_ckv 512 --head_dim_kpe 64 --kv_dtype fp8_e4m3 --no_cuda_graph -n 1 -d 0"
timeout 100 ncu -k regex:transposed -c 1 --section SpeedOfLight --section WarpStateStats --section SourceCounters /tmp/b/mla4 $L >"$R/ncu_mla4.txt" 2>&1
grep -E "Duration|L1/TEX Cache|DRAM Through|excessive" $R/ncu_mla4.txt
tar czf "$OUT/results5.tgz" -C $R .
echo "end: $(smi)"
