#!/usr/bin/env bash
# Session 33, call 13 (H200): the final code (.ab/bin/final2.xz: the fa3 plan preferring the transposed kernel's uniform grid for fp8) on bench/attention/mla/mla_fp8.txt
exec bash "$(dirname "$0")/final_call.sh" 13 final2 final
