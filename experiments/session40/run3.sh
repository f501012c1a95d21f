#!/usr/bin/env bash
# Session 40, call 3 (H200): call 2's standalone program saw no ~335 us launches (285-309 us back to
# back). Which part of kbench's timing brings them: the graph of 10 calls, CUPTI, the cold-L2 read?
# The standalone in its three modes (stream, graph, graphflush), then kbench's row with its timing
# options (default; --no_cuda_graph; --use_cuda_events; both), every sample kept (--json_samples).
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res3; rm -rf $R; mkdir -p $R
unpack_bins
for mode in stream graph graphflush stream graph graphflush; do
  mkdir -p $R/$mode
  timeout 60 /tmp/b/mla_trace $R/$mode 300 $mode >/dev/null || echo "$mode exit $?"
  python3 - $R/$mode $mode <<'PY'
import csv, sys, statistics as st
t = [float(r['event_us']) for r in csv.DictReader(open(sys.argv[1] + '/launches.csv'))]
print('%-10s launch us: min %.1f median %.1f max %.1f' % (sys.argv[2], min(t), st.median(t), max(t)),
      {b: sum(1 for x in t if b <= x < b + 10) for b in range(280, 350, 10)})
PY
done
L=experiments/session40/repeat3.txt
for opts in "" "--no_cuda_graph" "--use_cuda_events" "--no_cuda_graph --use_cuda_events"; do
  tag=$(echo "x$opts" | tr -d ' -'); 
  sed "s/--case_tag/$opts --case_tag/" $L | grep -v '^#' > $R/list_$tag.txt
  timeout 100 /tmp/b/exp40 --testlist $R/list_$tag.txt --json $R/$tag.json --json_samples --output_path $R/$tag.csv >$R/$tag.log 2>&1 || echo "$tag exit $?"
  python3 - $R/$tag.json "$opts" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d['results']:
    s = sorted(r.get('samples') or r.get('samples_ms') or [])
    key = [k for k in r if 'sample' in k]
    print(f"[{sys.argv[2]}] {r['backend']:15s} median {r['median_time']*1000:.1f} keys {key} n {len(s)}",
          "samples us:", " ".join(f"{x*1000:.0f}" for x in s) if s else "")
PY
done
echo "end: $(smi)"
tar czf $OUT/res3.tgz -C $R .
