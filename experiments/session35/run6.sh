#!/usr/bin/env bash
# Session 35, call 6 (H200): the GEMM and MoE lines of FlashInfer's sample testlist
# (peer_gemm_moe.txt), unchanged, every case refchecked, on the landed build (.ab/bin/final.xz).
source "$(dirname "$0")/../session25/common.sh"
unpack .ab/bin/final.xz /tmp/b/final
timeout 140 /tmp/b/final --testlist experiments/session35/peer_gemm_moe.txt --refcheck --output_path "$OUT/peer_gemm_moe.csv" >"$OUT/peer_gemm_moe.log" 2>&1
echo "peer exit $?: $(grep -E 'Testlist summary|\] Backends:' "$OUT/peer_gemm_moe.log" | tr '\n' ' ')"
grep -E '^\[ERROR\]' "$OUT/peer_gemm_moe.log" | head -20
echo "end: $(smi)"
