#!/usr/bin/env bash
# Session 43, call 1 (H200): mm_fp4 with A expanded in the consumers' registers (fra) against main (m43).
source "$(dirname "$0")/steps.sh"
ab_call 1 fra m43 fp4_ab.txt 3
