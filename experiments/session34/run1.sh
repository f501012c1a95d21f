#!/usr/bin/env bash
# Session 34, call 1 (H200): main (cdd6c2d, .ab/bin/cdd.xz) owed its MLA GPU tests; s34a (the producers load a
# later segment's first two tiles before its Q^T, q prefetched into L2; the consumers free Q^T before the
# merge) its GPU tests and compute-sanitizer; both on mla_ab.txt (carry cdd.xz, s34a.xz).
exec bash "$(dirname "$0")/mla_call.sh" 1 s34a old
