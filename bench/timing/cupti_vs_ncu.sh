# CUPTI (kbench's timer) against Nsight Compute's gpu__time_duration, one kernel of each family
# (bench/run.sh hook: $KBENCH and $OUT set). ncu replays each kernel apart, so the GPU runs it cool,
# at its maximum clock; kbench back to back (-n 50) runs a compute-bound kernel at the power cap's
# clock. So kbench measures twice: sustained (-n 50, what it reports) and cool (-n 5 -d 0 after 3 s
# idle, the conditions ncu's kernels see): the timer's truth is the cool figure against ncu's.
# Direct launches and a cold L2 in both; ncu at the GPU's own clocks (--clock-control none) with its
# cache flush before every kernel, as kbench flushes before every call. ncu owns CUPTI while it
# runs, so its run times with events and only ncu's numbers are used from it.
command -v ncu >/dev/null || { echo "# cupti_vs_ncu: no ncu here"; return 0; }
timing_cases=(
  "rmsnorm --routine rmsnorm --batch_size 8192 --hidden_size 8192 --input_dtype bfloat16 --backends cuda"
  "decode --routine BatchDecodeWithPagedKVCacheWrapper --backends fa2_tc --page_size 16 --batch_size 64 --s_qo 1 --s_kv 8192 --num_qo_heads 64 --num_kv_heads 8 --head_dim_qk 128 --head_dim_vo 128"
  "prefill --routine BatchPrefillWithRaggedKVCacheWrapper --backends fa3 --batch_size 16 --s_qo 4096 --s_kv 4096 --num_qo_heads 32 --num_kv_heads 8 --head_dim_qk 128 --head_dim_vo 128 --causal"
)
ncu_calls=20
rm -f "$OUT/cupti_vs_ncu.csv"
for timing_case in "${timing_cases[@]}"; do
  read -r name args <<<"$timing_case"
  read -r -a args <<<"$args"
  echo "\$ kbench ${args[*]} --no_cuda_graph -n 50 --output_path cupti_vs_ncu_$name.csv"
  rm -f "$OUT/cupti_vs_ncu_$name.csv" "$OUT/cupti_vs_ncu_${name}_cool.csv"
  "$KBENCH" "${args[@]}" --no_cuda_graph -n 50 --output_path "$OUT/cupti_vs_ncu_$name.csv" >"$OUT/cupti_vs_ncu_$name.log" 2>&1
  sleep 3
  echo "\$ kbench ${args[*]} --no_cuda_graph -n 5 -d 0 --output_path cupti_vs_ncu_${name}_cool.csv"
  "$KBENCH" "${args[@]}" --no_cuda_graph -n 5 -d 0 --output_path "$OUT/cupti_vs_ncu_${name}_cool.csv" \
    >"$OUT/cupti_vs_ncu_${name}_cool.log" 2>&1
  echo "\$ ncu --clock-control none --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second --csv kbench ${args[*]} --no_cuda_graph --use_cuda_events -n $ncu_calls -d 0"
  ncu --clock-control none --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second --csv \
    "$KBENCH" "${args[@]}" --no_cuda_graph --use_cuda_events -n "$ncu_calls" -d 0 \
    >"$OUT/cupti_vs_ncu_${name}_ncu.csv" 2>"$OUT/cupti_vs_ncu_${name}_ncu.log"
  python3 bench/timing/cupti_vs_ncu.py "$name" "$OUT/cupti_vs_ncu_$name.csv" "$OUT/cupti_vs_ncu_${name}_cool.csv" \
    "$OUT/cupti_vs_ncu_${name}_ncu.csv" "$ncu_calls" \
    >>"$OUT/cupti_vs_ncu.csv"
done
cat "$OUT/cupti_vs_ncu.csv"
