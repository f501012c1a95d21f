#!/usr/bin/env bash
# Session 33, call 14 (H200): the final code (.ab/bin/final3.xz: the transposed kernel on balanced schedules too) on bench/attention/mla/mla_fp8.txt
exec bash "$(dirname "$0")/final_call.sh" 14 final3 final
