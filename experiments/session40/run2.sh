#!/usr/bin/env bash
# Session 40, call 2 (H200): mla_trace.cu (built against the experiment build with the per-CTA trace)
# in two processes, 300 launches each: launch times, per-CTA SM, start, end, cycles; GPC map.
source "$(dirname "$0")/../session25/common.sh"
R=/tmp/res2; rm -rf $R; mkdir -p $R
unpack .ab/bin/mla_trace.xz /tmp/b/mla_trace
for p in 1 2; do
  mkdir -p $R/p$p
  timeout 60 /tmp/b/mla_trace $R/p$p 300 || echo "p$p exit $?"
  python3 - $R/p$p <<'PY'
import csv, sys, statistics as st
d = sys.argv[1]
t = [float(r['event_us']) for r in csv.DictReader(open(d + '/launches.csv'))]
print('launch us: min %.1f median %.1f max %.1f' % (min(t), st.median(t), max(t)))
print('histogram:', {b: sum(1 for x in t if b <= x < b + 10) for b in range(270, 360, 10)})
PY
done
echo "end: $(smi)"
tar czf $OUT/trace2.tgz -C $R .
