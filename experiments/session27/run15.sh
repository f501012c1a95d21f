#!/usr/bin/env bash
# Session 27, call 15: seesaw fp8 tiles widened in two parts too (chunks 0..3 by the producer, 4..8 by
# the owning warpgroup: fi, seesaw_split_widening.patch) against 93bbf10 (p0: all by the warpgroup):
# call 13's steps (A/B of .ab/bin's two binaries, two rounds; racecheck and memcheck with fi).
exec bash "$(dirname "$0")/run13.sh"
