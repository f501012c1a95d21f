#!/usr/bin/env bash
# Session 26, call 2: Nsight Compute on the compute-bound MLA case, clusters of at most 1 / 2 / 4
# (why clusters ran 1.5x / 2.8x slower in call 1): one launch of the fa3 kernel each, details page.
source "$(dirname "$0")/../session25/common.sh"
for v in c1 c2 c4; do
  unpack .ab/bin/$v.xz /tmp/b/$v
  timeout 150 ncu --set full -k regex:mla_fa3_kernel -c 1 -o "$OUT/ncu_$v" /tmp/b/$v \
    --testlist experiments/session26/ncu_case.txt >"$OUT/ncu_$v.log" 2>&1
  ncu --import "$OUT/ncu_$v.ncu-rep" --page details --csv >"$OUT/ncu_${v}_details.csv" 2>&1
  echo "== $v"; grep -E '"(Duration|Cluster Size|Max Active Clusters|Achieved Occupancy|Waves Per SM|Compute \(SM\) Throughput|L2 Hit Rate|DRAM Throughput|Memory Throughput|Cluster Scheduling Policy|Theoretical Occupancy|Grid Size)"' "$OUT/ncu_${v}_details.csv" | awk -F'","' '{print $(NF-2), $(NF-1), $NF}'
done
echo "end: $(smi)"
