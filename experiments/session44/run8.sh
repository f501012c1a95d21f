#!/usr/bin/env bash
# Session 44, call 8 (H200), an experiment: mla_balanced_trace (built here against kernels with
# trace_balanced.patch) on issue 19's fixed- and random-length cases, bf16 and fp8 KV, 50 launches each.
source "$(dirname "$0")/steps.sh"
R=$OUT/res8; mkdir -p $R
unpack .ab/bin/trace.xz /tmp/b/trace
timeout 200 /tmp/b/trace $R 50 | tee $R/summary.txt
cd $R && tar czf $OUT/results8.tgz . && echo "end: $(smi)"
