#!/usr/bin/env bash
# Session 34, call 9 (H200): s34dbg = the final build with segment_clock.patch: each consumer warpgroup's
# thread 0 prints every segment's clock64 phases in its CTA's fifth launch (its outputs were kept
# uncompressed: call9/).
exec bash "$(dirname "$0")/probe_call.sh" s34dbg segments SEG
