# CUPTI against Nsight Compute on the rmsnorm 8192 x 8192 kernel (bench/run.sh hook): kbench's CUPTI
# median, then ncu's gpu__time_duration.sum of the same kernel (ncu owns CUPTI while it runs, so
# kbench times that run with events; only ncu's numbers are used from it).
command -v ncu >/dev/null || { echo "# cupti_vs_ncu: no ncu here"; return 0; }
args=(--routine rmsnorm --batch_size 8192 --hidden_size 8192 --no_cuda_graph)
echo "\$ kbench ${args[*]} -n 50 --output_path cupti_vs_ncu_kbench.csv"
"$KBENCH" "${args[@]}" -n 50 --output_path "$OUT/cupti_vs_ncu_kbench.csv" >"$OUT/cupti_vs_ncu_kbench.log" 2>&1
echo "\$ ncu --clock-control none --metrics gpu__time_duration.sum --kernel-name regex:rmsnorm_.*_kernel --csv kbench ${args[*]} --use_cuda_events -n 50 -d 0"
ncu --clock-control none --metrics gpu__time_duration.sum --kernel-name regex:rmsnorm_.*_kernel --csv \
  "$KBENCH" "${args[@]}" --use_cuda_events -n 50 -d 0 >"$OUT/cupti_vs_ncu_ncu.csv" 2>"$OUT/cupti_vs_ncu_ncu.log"
python3 bench/norm/cupti_vs_ncu.py "$OUT/cupti_vs_ncu_kbench.csv" "$OUT/cupti_vs_ncu_ncu.csv" | tee "$OUT/cupti_vs_ncu.csv"
