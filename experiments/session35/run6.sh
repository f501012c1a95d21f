#!/usr/bin/env bash
# Session 35, call 6 (H200): the GEMM and MoE lines of FlashInfer's sample testlist (peer_gemm_moe.txt).
bash "$(dirname "$0")/peer_call.sh" experiments/session35/peer_gemm_moe.txt peer_gemm_moe 140
