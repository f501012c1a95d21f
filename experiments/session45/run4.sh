#!/usr/bin/env bash
# Session 45, call 4 (H200): the final code after its review refactor (the device groups' prefix
# shared by both GEMM kernels, stage_group_prefix): the GEMM and MoE GPU tests, call 3's rows once
# (final, fp8), and Nsight Compute on the swapped kernel's FC1 at 128 tokens (its first launch).
source "$(dirname "$0")/steps.sh"
R=$OUT/r4
mkdir -p "$R"
unpack_all k45g
gtests gtest_gemm_moe.log 250 'KbenchGemm*:WgmmaGemm*:CutlassMoeGemm*:MoeEndToEnd.*:MoeNvfp4*'
rounds 1 "final k45g fp4_swap_ab.txt" "fp8 k45g fp8_moe.txt"
python3 experiments/session35/table.py "$R"/ab
timeout 150 ncu --kernel-name regex:fp4_swapped --launch-count 1 --set full -o "$R/fc1_swapped" \
  /tmp/b/k45g --testlist experiments/session45/ncu_fc1.txt >"$R/ncu.log" 2>&1
echo "ncu exit $?"
ncu --import "$R/fc1_swapped.ncu-rep" --page details --section WarpStateStats --section SchedulerStats \
  --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section SpeedOfLight >"$R/fc1_details.txt" 2>&1
grep -E "Duration|Issue Slots|Issued Warp|No Eligible|Stall|DRAM Throughput|Memory Throughput|Compute \(SM\)" "$R/fc1_details.txt" | head -30
ncu --import "$R/fc1_swapped.ncu-rep" --page raw --csv 2>/dev/null | python3 -c "
import csv,sys
rows=list(csv.reader(sys.stdin))
h,u,v=rows[0],rows[1],rows[2]
st=[(float(v[i].replace(',','')),h[i]) for i in range(len(h)) if 'smsp__average_warp_latency_issue_stalled' in h[i] and h[i].endswith('.ratio') and v[i].replace(',','').replace('.','',1).isdigit()]
for x,n in sorted(st,reverse=True)[:10]: print(f'{x:8.3f} {n}')
" > "$R/fc1_stalls.txt" 2>&1; cat "$R/fc1_stalls.txt"
finish 4
