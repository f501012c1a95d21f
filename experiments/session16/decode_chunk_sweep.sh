#!/usr/bin/env bash
# Calibrates the decode split plan (kernels/attention/decode/decode_plan.cpp) on the attention grid's
# losing decode points: each case with fa2_tc at forced chunk sizes (KBENCH_DECODE_CHUNK; 0: no split),
# the plan's own choice and cuDNN, one kbench call each. Usage: decode_chunk_sweep.sh KBENCH OUT_CSV
kb=${1:?kbench}; out=${2:?csv}
B="--routine BatchDecodeWithPagedKVCacheWrapper --page_size 16 --head_dim_qk 128 --head_dim_vo 128 --refcheck -n 30 -d 5"
cases=("--batch_size 1 --s_kv 131072 --num_qo_heads 8 --num_kv_heads 1"
       "--batch_size 1 --s_kv 131072 --num_qo_heads 16 --num_kv_heads 1"
       "--batch_size 4 --s_kv 131072 --num_qo_heads 8 --num_kv_heads 1"
       "--batch_size 16 --s_kv 512 --num_qo_heads 64 --num_kv_heads 8"
       "--batch_size 1 --s_kv 8192 --num_qo_heads 64 --num_kv_heads 8"
       "--batch_size 16 --s_kv 8192 --num_qo_heads 64 --num_kv_heads 8"
       "--batch_size 1 --s_kv 131072 --num_qo_heads 64 --num_kv_heads 8")
for c in "${cases[@]}"; do
  $kb $B $c --backends cudnn fa2_tc --case_tag plan --output_path "$out" >/dev/null 2>&1
  for chunk in 0 256 512 1024 2048 4096 8192; do
    KBENCH_DECODE_CHUNK=$chunk $kb $B $c --backends fa2_tc --case_tag "chunk_$chunk" --output_path "$out" >/dev/null 2>&1
  done
done
python3 - "$out" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
case = lambda r: (r["batch_size"], r["s_kv"], r["num_qo_heads"], r["num_kv_heads"])
for key in dict.fromkeys(case(r) for r in rows):
    rs = [r for r in rows if case(r) == key]
    cells = [f"{r['case_tag'].replace('chunk_', 'c')}:{r['backend']}={float(r['median_time']) * 1e3:.1f}" for r in rs]
    print("b{} kv{} h{}/{}".format(*key), " ".join(cells))
PY
