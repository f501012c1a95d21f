#!/usr/bin/env bash
# Session 43, call 5 (H200): the FP4 MoE's 64 x 128 weight_fp4 tiles with two converter warpgroups
# (w2c, each thread a half row of B) against one (fra, a30246f).
source "$(dirname "$0")/steps.sh"
ab_call 5 w2c fra moe_fp4_ab.txt 3
