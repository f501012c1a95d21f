#!/usr/bin/env bash
# Session 35, call 3 (H200): the two isolation tests call 2 could not run (their fault probe was not
# carried), racecheck on the MoE pipelines (smaller cases, longer limit), then the MoE layer on
# main, s35a and s35b (moe_ab.txt, 2 rounds) and session 34's MLA list on main and s35b (3 rounds:
# the keyless-segment dedupe read 0.9% slower on fixed lengths in call 1).
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/steps.sh"
R=/tmp/res3; rm -rf $R; mkdir -p $R
unpack_all s35b
unpack build/carry/fault_probe.xz /work/main/build/tests/kbench_fault_probe
gtests gtest_isolation.log 60 'Isolation.*'
sanitize racecheck s35b experiments/session35/sanitize_moe.txt racecheck_moe.log 150
nvidia-smi dmon -s pc -d 1 >"$R/dmon.txt" 2>&1 & dmon=$!
ab moe experiments/session35/moe_ab.txt 2 290
mkdir -p /tmp/aside && mv .ab/bin/s35a.xz /tmp/aside/  # the MLA kernels are the same in s35a and s35b
ab mla experiments/session34/mla_ab.txt 3 120
kill $dmon
finish 3
