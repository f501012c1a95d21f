#!/usr/bin/env bash
# Session 35, call 1 (H200): the staged GEMM epilogue (.ab/bin/new.xz; with it the MLA consumers'
# keyless-segment marking through is_empty_split, session 34's empty_split_dedupe.patch) against main
# (.ab/bin/main.xz): the GEMM and MLA GPU tests, compute-sanitizer on the GEMM routines (both tile
# shapes, clusters of 2) and the MLA cases, then gemm_ab.txt (3 rounds) and session 34's mla_ab.txt
# (2 rounds), the binaries in turn.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/steps.sh"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
R=/tmp/res1; rm -rf $R; mkdir -p $R
unpack_all new
gtests gtest.log 300 'KbenchGemm*:CutlassGemm.KbenchRefchecksEndToEnd:*Mla*'
gemm_sanitizers new
for tool in memcheck racecheck; do sanitize $tool new experiments/session33/sanitize_mla.txt ${tool}_mla.log 120; done
nvidia-smi dmon -s pc -d 1 >"$R/dmon.txt" 2>&1 & dmon=$!
ab gemm experiments/session35/gemm_ab.txt 3 420
ab mla experiments/session34/mla_ab.txt 2 200
kill $dmon
finish 1
