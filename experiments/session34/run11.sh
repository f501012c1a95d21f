#!/usr/bin/env bash
# Session 34, call 11 (H200): s34g (s34f, and each consumer warpgroup frees Q^T right after its last tile's S^T
# GEMMs instead of after its tile loop); s34f (landed) and s34g on mla_ab.txt.
exec bash "$(dirname "$0")/mla_call.sh" 11 s34g
