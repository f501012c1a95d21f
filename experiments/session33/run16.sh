#!/usr/bin/env bash
# Session 33, call 16 (H200): the final code (.ab/bin/final5.xz: the transposed kernel on balanced schedules too, one translation unit a variant) on bench/attention/mla/mla_fp8.txt
exec bash "$(dirname "$0")/final_call.sh" 16 final5 final
