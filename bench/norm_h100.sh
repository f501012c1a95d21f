#!/usr/bin/env bash
# The RMSNorm figures of issue 2, measured by kbench on the device. Every command is printed
# before it runs ("$ kbench ..."), and writes its CSV into the output folder ($1).
set -uo pipefail
kbench=${KBENCH:-build/src/app/kbench}
out=${1:?usage: norm_h100.sh OUTPUT_DIR}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
run() {  # run NAME ARGS...: one kbench command, its CSV and its log
  local name=$1; shift
  echo "# $name"; echo "\$ kbench $*"
  "$kbench" "$@" --output_path "$out/$name.csv" 2>&1 | tee "$out/$name.log"
}

# The seed's rmsnorm_quant example, verbatim, and the seed's testlist style.
run seed_rmsnorm_quant --routine rmsnorm_quant --batch_size 32 --hidden_size 4096 --input_dtype bfloat16 \
  --out_dtype fp8_e4m3 --scale 1.0 --refcheck -vv --generate_repro_command --case_tag "rmsnorm_quant_fp8_e4m3"
run sample_testlist --testlist "$here/../samples/sample_testlist.txt"

# Bandwidth: rmsnorm bf16 8192 x 8192 (target >= 2.8 TB/s), CUPTI and cold L2.
run rmsnorm_8192x8192 --routine rmsnorm --batch_size 8192 --hidden_size 8192 --input_dtype bfloat16 --refcheck -n 100

# Latency: rmsnorm bf16 32 x 4096 with CUDA graphs (target median <= 4 us), by each timer.
run rmsnorm_32x4096_graph --routine rmsnorm --batch_size 32 --hidden_size 4096 --refcheck -n 100 --case_tag graph_cupti
run rmsnorm_32x4096_graph --routine rmsnorm --batch_size 32 --hidden_size 4096 -n 100 --use_cuda_events --case_tag graph_events
run rmsnorm_32x4096_graph --routine rmsnorm --batch_size 32 --hidden_size 4096 -n 100 --no_cuda_graph --case_tag direct_cupti

# Every routine of the family across shapes.
run norm_family --testlist "$here/norm_family.txt"

# CUPTI against Nsight Compute on the 8192 x 8192 kernel: kbench's CUPTI median, then ncu's
# gpu__time_duration.sum of the same kernel (ncu owns CUPTI while it runs, so kbench times that
# run with events; only ncu's numbers are used from it).
run cupti_vs_ncu_kbench --routine rmsnorm --batch_size 8192 --hidden_size 8192 --no_cuda_graph -n 50
echo "\$ ncu --clock-control none --metrics gpu__time_duration.sum --kernel-name regex:rmsnorm_.*_kernel --csv kbench --routine rmsnorm --batch_size 8192 --hidden_size 8192 --no_cuda_graph --use_cuda_events -n 50 -d 0"
ncu --clock-control none --metrics gpu__time_duration.sum --kernel-name regex:rmsnorm_.*_kernel --csv \
  "$kbench" --routine rmsnorm --batch_size 8192 --hidden_size 8192 --no_cuda_graph --use_cuda_events -n 50 -d 0 \
  >"$out/cupti_vs_ncu_ncu.csv" 2>"$out/cupti_vs_ncu_ncu.log"
python3 "$here/cupti_vs_ncu.py" "$out/cupti_vs_ncu_kbench.csv" "$out/cupti_vs_ncu_ncu.csv" | tee "$out/cupti_vs_ncu.csv"

# For context: this device's copy bandwidth (device-to-device, bytes read + written), by PyTorch.
python3 - <<'PY' 2>&1 | tee "$out/copy_bandwidth.log"
import torch
x = torch.randn(8192 * 8192 * 2, device="cuda", dtype=torch.bfloat16); y = torch.empty_like(x)
for _ in range(5): y.copy_(x)
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
times = []
for _ in range(50):
    s.record(); y.copy_(x); e.record(); torch.cuda.synchronize(); times.append(s.elapsed_time(e))
times.sort(); t = times[len(times) // 2]
print(f"# device-to-device copy of {x.numel() * 2 / 1e6:.0f} MB: median {t:.4f} ms, {2 * x.numel() * 2 / (t * 1e9):.3f} TB/s (read + write)")
PY
