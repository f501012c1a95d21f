# Clocks, power and noise (issue 15; bench/run.sh hook: $KBENCH and $OUT set): a compute-bound
# prefill (16 x 4096 causal, fa3) as the reference times it and again with --max_noise 0.5, with
# its clock/power columns and JSON; then the norm testlist twice and `kbench compare` on the runs.
prefill=(--routine BatchPrefillWithRaggedKVCacheWrapper --backends fa3 cudnn --batch_size 16 --s_qo 4096 --s_kv 4096
         --num_qo_heads 64 --num_kv_heads 8 --head_dim_qk 128 --head_dim_vo 128 --causal --refcheck)
for mode in fixed max_noise; do
  extra=()
  [ "$mode" = max_noise ] && extra=(--max_noise 0.5)
  echo "\$ kbench ${prefill[*]} ${extra[*]} --output_path prefill_$mode.csv --json prefill_$mode.json"
  rm -f "$OUT/prefill_$mode.csv"
  "$KBENCH" "${prefill[@]}" "${extra[@]}" --output_path "$OUT/prefill_$mode.csv" --json "$OUT/prefill_$mode.json" 2>&1 |
    tee "$OUT/prefill_$mode.log"
done
for run in 1 2; do
  echo "\$ kbench --testlist bench/norm/norm_family.txt --output_path norm_run$run.csv --json norm_run$run.json"
  rm -f "$OUT/norm_run$run.csv"
  "$KBENCH" --testlist bench/norm/norm_family.txt --output_path "$OUT/norm_run$run.csv" --json "$OUT/norm_run$run.json" \
    >"$OUT/norm_run$run.log" 2>&1
done
echo "\$ kbench compare norm_run1.csv norm_run2.csv"
"$KBENCH" compare "$OUT/norm_run1.csv" "$OUT/norm_run2.csv" 2>&1 | tee "$OUT/compare_norm.txt"
echo "compare exit status: ${PIPESTATUS[0]}" | tee -a "$OUT/compare_norm.txt"
