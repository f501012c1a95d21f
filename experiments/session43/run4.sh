#!/usr/bin/env bash
# Session 43, call 4 (H200): fsc2 (call 3's fsc with the consumers' half row of B expanded a slice
# ahead, after their wgmmas are issued: consumers_expand_half_of_b.patch) against fra (a30246f).
source "$(dirname "$0")/steps.sh"
ab_call 4 fsc2 fra fp4_ab.txt 3
