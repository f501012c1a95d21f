#!/usr/bin/env bash
# Session 34, call 10 (H200): s34dbg2 = the final build with segment_sums.patch: each consumer
# warpgroup's thread 0 prints one line a launch, its CTA's sums of the segments' clock64 phases.
exec bash "$(dirname "$0")/probe_call.sh" s34dbg2 sums CTA
