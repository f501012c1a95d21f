#!/usr/bin/env bash
# Session 34, call 6 (H200): the launch helpers' refactor (launch.hpp: ensure_smem_limit<kernel>,
# memo_per_device; every family's launch path) on s34f: the whole GPU test binary.
exec bash "$(dirname "$0")/gpu_tests_call.sh" s34f
