#!/usr/bin/env bash
# Session 27, call 6: A/B, two rounds, of 67d54ec (p0: seesaw fp8 tiles widened by the producer) against
# the seesaw consumers widening their own tiles (fi), fa3 on bf16 and fp8 lines (timing only).
source "$(dirname "$0")/../session25/common.sh"
scripts/ab.sh run-bin experiments/session27/ab_fp8.txt 2
echo "end: $(smi)"
