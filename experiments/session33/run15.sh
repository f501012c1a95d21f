#!/usr/bin/env bash
# Session 33, call 15 (H200): the final code (.ab/bin/final4.xz: the transposed kernel on balanced schedules too, a segment's first two loads before its Q) on bench/attention/mla/mla_fp8.txt
exec bash "$(dirname "$0")/final_call.sh" 15 final4 final3
