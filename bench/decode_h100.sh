#!/usr/bin/env bash
# Issue 3's decode figures, measured by kbench on the device: every command is printed before it
# runs ("$ kbench ..."), and writes its CSV into the output folder ($1).
set -uo pipefail
kbench=${KBENCH:-build/src/app/kbench}
out=${1:?usage: decode_h100.sh OUTPUT_DIR}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
echo "\$ kbench --testlist bench/decode_h100.txt --output_path decode_h100.csv"
"$kbench" --testlist "$here/decode_h100.txt" --output_path "$out/decode_h100.csv" 2>&1 | tee "$out/decode_h100.log"
