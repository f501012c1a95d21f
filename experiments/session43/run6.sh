#!/usr/bin/env bash
# Session 43, call 6 (H200): w2c with 7 16-bit stages (w7s, d5ce845) against fra (a30246f).
source "$(dirname "$0")/steps.sh"
ab_call 6 w7s fra moe_fp4_ab2.txt 2
