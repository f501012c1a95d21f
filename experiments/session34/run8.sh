#!/usr/bin/env bash
# Session 34, call 8 (H200): Nsight Compute on the final build s34f (ncu_call.sh), as call 2.
exec bash "$(dirname "$0")/ncu_call.sh" 8 s34f
