#!/usr/bin/env bash
# Session 32, call 3 (H200): Nsight Compute on one launch each of kbench's GEMM (clusters of 2;
# groupwise and per-tensor FP8 4096 x 7168 x 16384, bf16 8192^3) and of cuBLASLt's bf16 8192^3
# kernel (ncu_cases.txt: tag;kernel regex;kbench line), --set full, clocks not locked.
source "$(dirname "$0")/../session25/common.sh"
unpack .ab/bin/new.xz /tmp/b/new
R=/tmp/res; mkdir -p $R
while IFS= read -r line; do
  tag=${line%%;*}; rest=${line#*;}; kernel=${rest%%;*}; args=${rest#*;}
  read -r -a extra <<<"$args"
  timeout 150 ncu --clock-control none --set full --import-source no --kernel-name "regex:$kernel" --launch-skip 2 \
    --launch-count 1 -o "$R/ncu_$tag" /tmp/b/new "${extra[@]}" --no_cuda_graph -n 3 -d 1 >"$R/ncu_$tag.log" 2>&1
  ncu -i "$R/ncu_$tag.ncu-rep" --page details >"$R/ncu_${tag}_details.txt" 2>&1
  ncu -i "$R/ncu_$tag.ncu-rep" --page source --csv --print-source sass >"$R/ncu_${tag}_source.csv" 2>&1
  rm -f "$R/ncu_$tag.ncu-rep"
  echo "$tag: $(grep -E 'Duration|Compute \(SM\) Throughput|SM Frequency' "$R/ncu_${tag}_details.txt" | head -3 | tr -s ' ' | tr '\n' ';')"
done <experiments/session32/ncu_cases.txt
tar czf "$OUT/results3.tgz" -C $R .
echo "end: $(smi)"
