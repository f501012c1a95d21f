#!/usr/bin/env bash
# Session 34, call 5 (H200): s34e (s34a with one call site of stage_q, the uniform grid keeping Q^T
# first: landed); cdd, s34a, s34e on mla_ab.txt.
exec bash "$(dirname "$0")/mla_call.sh" 5 s34e
