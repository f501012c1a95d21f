#!/usr/bin/env bash
# Session 36, call 2 (H200): main, gw5 and gw6 (gw_ab2.txt's header) on the groupwise GEMMs, 3 rounds
# in turn; DeepSeek-V3's FP8 MoE layer at 4096 tokens, 2 rounds.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/steps.sh"
R=/tmp/res2; rm -rf $R; mkdir -p $R
unpack_bins
nvidia-smi dmon -s pc -d 1 >"$R/dmon.txt" 2>&1 & dmon=$!
ab gw experiments/session36/gw_ab2.txt 3 300
grep deepseek_v3_moe_4096 experiments/session36/moe_ab.txt > $R/moe.txt
ab moe $R/moe.txt 2 150
kill $dmon
finish 2
