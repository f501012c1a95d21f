#!/usr/bin/env bash
# Session 34, call 12 (H200): s34h (memo_per_device without its unused device output): the whole GPU
# test binary.
exec bash "$(dirname "$0")/gpu_tests_call.sh" s34h
