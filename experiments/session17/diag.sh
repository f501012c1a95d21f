#!/usr/bin/env bash
# One device call: the mm_fp4 racecheck diagnosis (split-K or not) on an existing build.
set -uo pipefail
kb=${KBENCH_BUILD_DIR:-build-device}/src/app/kbench
w=$OUT/diag; mkdir -p "$w"
cs() { timeout 200 compute-sanitizer --tool racecheck --racecheck-report all --error-exitcode 99 "$@"; }
cs "$kb" --testlist experiments/session17/racecheck_split_cases.txt >"$w/racecheck_default.log" 2>&1
echo "racecheck default: $? $(grep -E 'RACECHECK SUMMARY' "$w/racecheck_default.log" | tr '\n' ' ')"
KBENCH_WGMMA_GEMM_SPLITS=1 cs "$kb" --testlist experiments/session17/racecheck_split_cases.txt >"$w/racecheck_nosplit.log" 2>&1
echo "racecheck splits=1: $? $(grep -E 'RACECHECK SUMMARY' "$w/racecheck_nosplit.log" | tr '\n' ' ')"
grep -E "hazard|Race|at .* in " "$w/racecheck_default.log" | sort | uniq -c | head -20
