#!/usr/bin/env bash
# Session 35, call 7 (H200): FlashInfer's whole sample testlist (../shared/peer/, carried as
# build/carry/peer.txt).
bash "$(dirname "$0")/peer_call.sh" build/carry/peer.txt peer 150
