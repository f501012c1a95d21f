#!/usr/bin/env bash
# Session 27, call 2: fa3 fp8 KV with per-box raw barriers (fi) against the same with the widening
# skipped (nowiden: a bound, wrong results), two rounds.
source "$(dirname "$0")/../session25/common.sh"
scripts/ab.sh run-bin experiments/session27/ab_fp8.txt 2
echo "end: $(smi)"
