#!/usr/bin/env bash
# Session 25, call 6: Nsight Compute on the seesaw MLA kernel, compute-bound case (one launch), for
# the next session's work on issue 19: the details page and per-instruction stall samples.
source "$(dirname "$0")/common.sh"
unpack .ab/bin/seesaw.xz /tmp/b/kbench
timeout 300 ncu --set full -k regex:mla_fa3 -c 1 -o "$OUT/mla_seesaw_compute_bound" /tmp/b/kbench --routine BatchMLAPagedAttentionWrapper \
  --backends fa3 --page_size 64 --batch_size 64 --s_qo 2 --s_kv 8192 --num_qo_heads 128 --num_kv_heads 1 --head_dim_ckv 512 \
  --head_dim_kpe 64 -n 1 -d 0 --no_cuda_graph >"$OUT/ncu_run.log" 2>&1
echo "ncu exit $?"; tail -3 "$OUT/ncu_run.log"
ncu -i "$OUT/mla_seesaw_compute_bound.ncu-rep" --page details --csv >"$OUT/details.csv" 2>&1
ncu -i "$OUT/mla_seesaw_compute_bound.ncu-rep" --page source --csv --print-source sass >"$OUT/source_sass.csv" 2>&1
grep -E '"(Duration|Compute \(SM\) Throughput|Memory Throughput|L2 Hit Rate|Issue Slots Busy|Achieved Occupancy|SM Frequency)"' "$OUT/details.csv" | cut -c1-200
echo "end: $(smi)"
