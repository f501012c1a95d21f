#!/usr/bin/env bash
# The prefill issue's figures, measured by kbench on the device, the seed's prefill commands run
# unchanged, and fa3's paged page-size sweep: every command is printed before it runs
# ("$ kbench ..."), and writes its CSV into the output folder ($1).
set -uo pipefail
kbench=${KBENCH:-build/src/app/kbench}
out=${1:?usage: prefill_h100.sh OUTPUT_DIR}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
echo "\$ kbench --testlist bench/prefill_h100.txt --output_path prefill_h100.csv"
"$kbench" --testlist "$here/prefill_h100.txt" --output_path "$out/prefill_h100.csv" 2>&1 | tee "$out/prefill_h100.log"
echo "\$ kbench --testlist samples/prefill_seed.txt --output_path prefill_seed.csv"
"$kbench" --testlist "$here/../samples/prefill_seed.txt" --output_path "$out/prefill_seed.csv" 2>&1 | tee "$out/prefill_seed.log"
echo "\$ kbench --testlist bench/prefill_paged_sweep_h100.txt --output_path prefill_paged_sweep.csv"
"$kbench" --testlist "$here/prefill_paged_sweep_h100.txt" --output_path "$out/prefill_paged_sweep.csv" 2>&1 | tee "$out/prefill_paged_sweep.log"
