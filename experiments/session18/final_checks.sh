#!/usr/bin/env bash
# Session 18's last device call: build (FlashInfer off), the GPU tests of what changed (EXTRA_GTEST adds
# more), racecheck on fa3's cases, and the decode and prefill issues' testlists (no-regression runs).
set -uo pipefail
cd "$(dirname "$0")/../.."
export KBENCH_CMAKE_ARGS=-DKBENCH_WITH_FLASHINFER=OFF
export GTEST_FILTER="EndToEnd.*Decode*:EndToEnd.*Prefill*:DecodeKernels.*:PrefillKernels.*${EXTRA_GTEST:+:$EXTRA_GTEST}"
scripts/device.sh info build gtest racecheck_fa3 sanitize_kbench ${EXTRA_STAGES:-} bench:attention/decode bench:attention/prefill
