#!/usr/bin/env bash
# Session 39, call 11 (H200): is the bf16 memory-bound row's spread (calls 8-10) the TMA boxes'? gth
# (the landed code plus mla_page_tma_off.patch): four processes alternating the default (pages by TMA
# boxes) and KBENCH_MLA_PAGE_TMA=0 (every tile gathered by the producers' cp.async), each running
# repeat4.txt (the row four times, new inputs each line; fa3 and flashinfer_fa3). Carry .ab/bin.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res11; rm -rf $R; mkdir -p $R
unpack_bins
for p in tma1 gather1 tma2 gather2; do
  tma=1; case $p in gather*) tma=0 ;; esac
  KBENCH_MLA_PAGE_TMA=$tma timeout 90 /tmp/b/gth --testlist experiments/session39/repeat4.txt --output_path $R/$p.csv >$R/$p.log 2>&1
  python3 - "$R/$p.csv" "$p" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(sys.argv[2], " ".join(f"{r['case_tag']}:{r['backend']}={float(r['median_time'])*1000:.1f}:{r['refcheck_status']}" for r in rows))
PY
done
tar czf "$OUT/results11.tgz" -C "$R" .
