#!/usr/bin/env bash
# Session 41, call 8 (H200): is the bf16 compute-bound row's ~5% (call 7) the seesaw producer's new
# arrivals? m41 (main), fc41 (landed), sv41 (fc41 + seesaw_old_arrivals.patch: the seesaw's
# part-by-part loads with thread 0 arriving for all, as before the fix) on cb41.txt, four rounds in a
# rotating order.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=$OUT/res8; mkdir -p $R/cb
unpack_bins
AB=$R/cb RUN_LIMIT=20 list=experiments/session41/cb41.txt
run_as m41 1 m41; run_as fc41 1 fc41; run_as sv41 1 sv41
run_as fc41 2 fc41; run_as sv41 2 sv41; run_as m41 2 m41
run_as sv41 3 sv41; run_as m41 3 m41; run_as fc41 3 fc41
run_as m41 4 m41; run_as sv41 4 sv41; run_as fc41 4 fc41
python3 experiments/session35/table.py $R/cb
cd $R && tar czf $OUT/res8.tgz . && echo "end: $(smi)"
