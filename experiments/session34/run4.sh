#!/usr/bin/env bash
# Session 34, call 4 (H200): s34d (s34b with one call site each of stage_q and the segment search, the
# consumers reading the Block in place, a slot per segment parity); cdd, s34a, s34d on mla_ab.txt.
exec bash "$(dirname "$0")/mla_call.sh" 4 s34d
