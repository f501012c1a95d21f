#!/usr/bin/env bash
# Session 39, call 8 (H200): is fa3's bf16 memory-bound time bimodal between processes (288-335 us in
# calls 2, 3 and 7, FlashInfer's 291-296)? The row in 8 processes with the default seed and in 4
# with other seeds, each process fa3 then flashinfer_fa3. Carry .ab/bin (sch).
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res8; rm -rf $R; mkdir -p $R
unpack_bins
L='--routine BatchMLAPagedAttentionWrapper --num_kv_heads 1 --head_dim_ckv 512 --head_dim_kpe 64 --refcheck --s_qo 1 --num_qo_heads 16 --page_size 64 --batch_size 128 --s_kv 8192 --backends fa3 flashinfer_fa3'
for i in 1 2 3 4 5 6 7 8 s1 s2 s3 s4; do
  seed=42; case $i in s*) seed=$((1000 + ${i#s})) ;; esac
  timeout 60 /tmp/b/sch $L --random_seed $seed --case_tag run_$i --output_path $R/run_$i.csv >$R/run_$i.log 2>&1
  python3 - "$R/run_$i.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(" ".join(f"{r['case_tag']} {r['backend']} {float(r['median_time'])*1000:.1f}us {r['refcheck_status']} {r.get('sm_clock_mhz','')}MHz" for r in rows))
PY
done
tar czf "$OUT/results8.tgz" -C "$R" .
