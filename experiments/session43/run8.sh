#!/usr/bin/env bash
# Session 43, call 8 (H200): the FP4 converters with one proxy fence a slice, after the expansion
# (w1f), against two (w7s, d5ce845: one before, to release the raw stage early).
source "$(dirname "$0")/steps.sh"
ab_call 8 w1f w7s fence_ab.txt 2
