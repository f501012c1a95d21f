#!/usr/bin/env bash
# Softmax's cluster size (KBENCH_SOFTMAX_CLUSTER=<n>; "plan": the plan's own choice, the cluster size
# that keeps the most rows resident), each on the same testlist, one device call; copy bandwidth beside.
kb=${KBENCH_BUILD_DIR:-build-device}/src/app/kbench
bash bench/norm/copy_bandwidth.sh
for c in plan 8 5 4 6 9 11 16; do
  if [ "$c" = plan ]; then unset KBENCH_SOFTMAX_CLUSTER; else export KBENCH_SOFTMAX_CLUSTER=$c; fi
  "$kb" --testlist experiments/session17/softmax_plans.txt --output_path "$OUT/softmax_cluster_$c.csv" >"$OUT/softmax_cluster_$c.log" 2>&1
  python3 -c "
import csv
for r in csv.DictReader(open('$OUT/softmax_cluster_$c.csv')):
    print('$c', r['case_tag'], r['median_time'], r['tb_per_sec'], r.get('refcheck',''), r.get('sm_clock_mhz',''))"
done
unset KBENCH_SOFTMAX_CLUSTER
