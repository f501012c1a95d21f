#!/usr/bin/env bash
# Session 34, call 3 (H200): s34b (s34a, and the producers publish each segment's Block in shared memory,
# found and its q prefetched when the last tile of the one before is loaded); cdd, s34a, s34b on mla_ab.txt.
exec bash "$(dirname "$0")/mla_call.sh" 3 s34b
