#!/usr/bin/env bash
# Session 34, call 2 (H200): Nsight Compute on s34a (ncu_call.sh).
exec bash "$(dirname "$0")/ncu_call.sh" 2 s34a
