#!/usr/bin/env bash
# Session 15: the streamed softmax's plan knobs (experiment overrides read by plan_filter), each
# line refchecked, softmax 256 x 128256 float32 unless named; beside the cluster kernel and a copy.
#   experiments/session15/softmax_sweep.sh OUT_DIR   (after a build in build-device)
set -uo pipefail
out=$1
mkdir -p "$out"
kb=${KBENCH:-build-device/src/app/kbench}
base="--routine softmax --batch_size 256 --vocab_size 128256 --input_dtype float32 --backends cuda --refcheck"
run() {  # run TAG "ENV=..." [extra flags]
  local tag=$1 envs=$2; shift 2
  env $envs "$kb" $base "$@" --case_tag "$tag" --output_path "$out/$tag.csv" >"$out/$tag.log" 2>&1
  python3 - "$out/$tag.csv" "$tag" "$envs" <<'PY' || { echo "$tag: no CSV"; tail -3 "$out/$tag.log"; }
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(f"{sys.argv[2]:24s} {float(r['median_time'])*1e3:8.2f} us {float(r['tb_per_sec']):6.3f} TB/s {r['refcheck_status']:8s} "
          f"{r['sm_clock_mhz']} MHz {r['power_w']} W  [{sys.argv[3]}]")
PY
}
OUT=$out source bench/norm/copy_bandwidth.sh
run cluster "KBENCH_SOFTMAX_KERNEL=cluster"
run streamed "KBENCH_SOFTMAX_KERNEL=streamed"
run hints0 "KBENCH_SOFTMAX_HINTS=0"
run hints2 "KBENCH_SOFTMAX_HINTS=2"
for st in 3 4 5; do run stages$st "KBENCH_SOFTMAX_STAGES=$st"; done
for lag in 264 400 600 1200; do run lag$lag "KBENCH_SOFTMAX_LAG=$lag"; done
run ctas2 "KBENCH_SOFTMAX_CTAS_PER_SM=2"
run ctas2_lag400 "KBENCH_SOFTMAX_CTAS_PER_SM=2 KBENCH_SOFTMAX_LAG=400"
run ctas2_lag600 "KBENCH_SOFTMAX_CTAS_PER_SM=2 KBENCH_SOFTMAX_LAG=600"
run ctas3 "KBENCH_SOFTMAX_CTAS_PER_SM=3"
run ctas3_lag400 "KBENCH_SOFTMAX_CTAS_PER_SM=3 KBENCH_SOFTMAX_LAG=400"
run cluster_again "KBENCH_SOFTMAX_KERNEL=cluster"
run streamed_again "KBENCH_SOFTMAX_KERNEL=streamed"
for dt in bfloat16 float16; do
  run ${dt}_cluster "KBENCH_SOFTMAX_KERNEL=cluster" --input_dtype $dt
  run ${dt}_streamed "KBENCH_SOFTMAX_KERNEL=streamed" --input_dtype $dt
done
for b in 1 8 32 64 4096; do
  run b${b}_cluster "KBENCH_SOFTMAX_KERNEL=cluster" --batch_size $b
  run b${b}_streamed "KBENCH_SOFTMAX_KERNEL=streamed" --batch_size $b
done
run v151936_b4096_cluster "KBENCH_SOFTMAX_KERNEL=cluster" --batch_size 4096 --vocab_size 151936
run v151936_b4096_streamed "KBENCH_SOFTMAX_KERNEL=streamed" --batch_size 4096 --vocab_size 151936
