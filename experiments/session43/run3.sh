#!/usr/bin/env bash
# Session 43, call 3 (H200): fsc (each consumer thread also expands a half row of B, between two
# slices' wgmmas; the converter the other half) against fra (a30246f).
source "$(dirname "$0")/steps.sh"
ab_call 3 fsc fra fp4_ab.txt 3
