#!/usr/bin/env bash
# Session 40, call 1 (H200): what makes fa3's bf16 memory-bound time depend on the allocation
# (session 39: 288-342 us, FlashInfer 286-302)? exp40 = main + experiment knobs
# (experiments/session40/alloc_knobs_trace.patch, without its trace): KBENCH_EXP_BOX_ROTATE (each CTA issues a tile's nine
# boxes from a different chunk), KBENCH_EXP_L2_PROMOTION (0 none .. 3 256 B, the default),
# KBENCH_EXP_PAGES_IN_ORDER (no page shuffle: FlashInfer reads the same order). Each config in three
# processes, the row three times each. Carry .ab/bin.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=$OUT/call1; mkdir -p $R
unpack_bins
configs=("default" "rotate KBENCH_EXP_BOX_ROTATE=1" "promo0 KBENCH_EXP_L2_PROMOTION=0" "promo2 KBENCH_EXP_L2_PROMOTION=2" "inorder KBENCH_EXP_PAGES_IN_ORDER=1")
for p in 1 2 3; do
  for c in "${configs[@]}"; do
    set -- $c; name=$1; shift
    env "$@" timeout 100 /tmp/b/exp40 --testlist experiments/session40/repeat3.txt --output_path $R/${name}_$p.csv >$R/${name}_$p.log 2>&1 || echo "$name $p exit $?"
    python3 - "$R/${name}_$p.csv" "$name" "$p" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(f"{sys.argv[2]:8s} p{sys.argv[3]}", " ".join(f"{r['backend']}={float(r['median_time'])*1000:.1f}" for r in rows), "refcheck:", set(r['refcheck_status'] for r in rows), "MHz", [r['sm_clock_mhz'] for r in rows])
PY
  done
done
echo "end: $(smi)"
