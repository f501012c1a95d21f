#!/usr/bin/env bash
# Session 38, call 7 (H200): spf (12a022c, landed) and kah (spf, its producer loading a tile's kpe a
# tile ahead: between the two V halves of the tile before, the order the parts free in). A/B of main
# (d8e547c), spf and kah, two rounds, beside FlashInfer's MLA kernels (run by main); issue 19's
# targets list with spf and kah; kah's MLA GPU tests and compute-sanitizer racecheck / memcheck on
# the seesaw cases. Carry .ab/bin and build/carry (kah's GPU tests).
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res7; rm -rf $R; mkdir -p $R/mla/ab
unpack_all kah
AB=$R/mla/ab RUN_LIMIT=100
list=experiments/session38/mla_ab.txt
for b in main spf kah; do run_as $b 1 $b; done
list=experiments/session38/mla_fi.txt; run_as fi 1 main
list=experiments/session38/mla_ab.txt
for b in kah spf main; do run_as $b 2 $b; done
list=experiments/session38/mla_fi.txt; run_as fi 2 main
echo "after ab: $(smi)"
for b in spf kah; do
  timeout 150 /tmp/b/$b --testlist bench/attention/mla/mla_targets.txt --output_path $R/mla_targets_$b.csv -v >$R/mla_targets_$b.log 2>&1
  echo "targets $b exit $?: $(grep -c ',passed,' $R/mla_targets_$b.csv) passed rows; after: $(smi)"
done
gtests gtest_mla.log 150 '*Mla*'
sanitize racecheck kah experiments/session38/sanitize_seesaw.txt racecheck.log 100
sanitize memcheck kah experiments/session38/sanitize_seesaw.txt memcheck.log 60
finish 7
