#!/usr/bin/env bash
# Session 35, call 3 (H200): the two isolation tests call 2 could not run (their fault probe was not
# carried), racecheck on the MoE pipelines (smaller cases, longer limit), then the MoE layer on
# main, s35a and s35b (moe_ab.txt, 2 rounds) and session 34's MLA list on main and s35b (3 rounds:
# the keyless-segment dedupe read 0.9% slower on fixed lengths in call 1).
source "$(dirname "$0")/../session25/common.sh"
R=/tmp/res3; rm -rf $R; mkdir -p $R
for packed in .ab/bin/*.xz; do unpack "$packed" "/tmp/b/$(basename "$packed" .xz)"; done
unpack build/carry/gpu_tests.xz /tmp/b/gt; unpack build/carry/fault_probe.xz /work/main/build/tests/kbench_fault_probe
cp /tmp/b/s35b /work/main/build/src/app/kbench
timeout 60 /tmp/b/gt --gtest_filter='Isolation.*' >"$R/gtest_isolation.log" 2>&1
echo "isolation exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$R/gtest_isolation.log" | tr '\n' ' ')"
timeout 150 compute-sanitizer --tool racecheck /tmp/b/s35b --testlist experiments/session35/sanitize_moe.txt >"$R/racecheck_moe.log" 2>&1
echo "racecheck moe exit $?: $(grep -E 'RACECHECK SUMMARY' "$R/racecheck_moe.log" | tr '\n' ' ') passed: $(grep -c 'cuda passed' "$R/racecheck_moe.log")"
nvidia-smi dmon -s pc -d 1 >"$R/dmon.txt" 2>&1 & dmon=$!
OUT=$R/moe timeout 290 bash scripts/ab.sh run-bin experiments/session35/moe_ab.txt 2 >$R/moe_ab.txt 2>&1; echo "moe ab exit $?"
mkdir -p /tmp/aside && mv .ab/bin/s35a.xz /tmp/aside/  # the MLA kernels are the same in s35a and s35b
OUT=$R/mla timeout 120 bash scripts/ab.sh run-bin experiments/session34/mla_ab.txt 3 >$R/mla_ab.txt 2>&1; echo "mla ab exit $?"
kill $dmon
python3 experiments/session35/table.py $R/moe/ab $R/mla/ab
tar czf "$OUT/results3.tgz" -C $R .
echo "end: $(smi)"
