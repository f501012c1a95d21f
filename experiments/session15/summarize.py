#!/usr/bin/env python3
"""One line per CSV row under the given folders: routine, case tag, backend, median us, TB/s,
TFLOP/s, refcheck, SM clock and power (session 15's device calls print this to their log)."""
import csv
import pathlib
import sys

for folder in sys.argv[1:]:
    for path in sorted(pathlib.Path(folder).rglob("*.csv")):
        try:
            rows = list(csv.DictReader(open(path)))
        except (OSError, csv.Error):
            continue
        for r in rows:
            if "median_time" not in r or not r["median_time"]:
                continue
            shape = "x".join(r.get(f) or "-" for f in ("batch_size", "m", "n", "k"))
            print(f"{path.stem[:22]:22s} {r['routine'][:28]:28s} {r.get('case_tag', '')[:24]:24s} {shape:22s} {r['backend'][:14]:14s} "
                  f"{float(r['median_time']) * 1e3:9.2f} us {float(r['tb_per_sec'] or 0):6.3f} TB/s "
                  f"{float(r['tflops'] or 0):7.1f} TF {r.get('refcheck_status', ''):9s} {r.get('sm_clock_mhz', '')} MHz "
                  f"{r.get('power_w', '')[:5]} W")
