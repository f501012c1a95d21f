#!/usr/bin/env bash
# Session 37, call 3 (H200): gw_ab.txt with sc (1fda67d), uni (release_mapped_once.patch: the peer's
# empty barriers mapped once, elect.sync for the releasing lane, a warp-uniform consumer index), uh
# (uni plus the decode tile heuristic) and un (uh without turns), 2 rounds in turn; pt_ab.txt and
# decode_ab.txt with sc and uh; Nsight Compute's warp states and source counters on uh's 128 x 256
# kernel at 4096 x 7168 x 16384. Carry .ab/bin (scripts/ab.sh pack).
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res3; rm -rf $R; mkdir -p $R/gw/ab $R/pt/ab $R/decode/ab
unpack_bins
list=experiments/session37/gw_ab.txt AB=$R/gw/ab RUN_LIMIT=90
for r in 1 2; do for b in sc uni uh un; do run_as $b $r $b; done; done
list=experiments/session37/pt_ab.txt AB=$R/pt/ab RUN_LIMIT=60
for r in 1 2; do for b in sc uh; do run_as $b $r $b; done; done
list=experiments/session37/decode_ab.txt AB=$R/decode/ab RUN_LIMIT=60
run_as sc 1 sc; run_as uh 1 uh
timeout 120 ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section SourceCounters \
  --import-source no --kernel-name regex:wgmma_gemm_kernel --launch-skip 2 --launch-count 1 -o $R/uh256 /tmp/b/uh \
  --routine gemm_fp8_nt_groupwise --m 4096 --n 7168 --k 16384 --scale_major_mode MN --backends cuda --no_cuda_graph \
  -n 3 -d 1 >$R/uh256.log 2>&1
echo "ncu exit $?"
ncu -i $R/uh256.ncu-rep --page details >$R/uh256_details.txt 2>&1
ncu -i $R/uh256.ncu-rep --page source --csv --print-source sass 2>&1 | xz -T4 -6 >$R/uh256_source.csv.xz
rm -f $R/uh256.ncu-rep
finish 3
