# Medians over rounds of each (case, backend, binary) of scripts/ab.sh run-bin's CSVs (us), the
# refcheck statuses and SM clocks: python3 table.py AB_DIR [AB_DIR ...]
import collections, csv, glob, os, statistics, sys
for folder in sys.argv[1:]:
    rows = collections.defaultdict(list)
    for f in sorted(glob.glob(os.path.join(folder, "ab_*.csv"))):
        binary = os.path.basename(f).split("_")[1]
        for i, r in enumerate(csv.DictReader(open(f))):
            rows[(i, r["case_tag"], r["backend"], binary)].append(r)
    print(f"== {folder}")
    for (i, tag, backend, binary), rs in sorted(rows.items()):
        times = [float(r["median_time"]) * 1000 for r in rs]
        print(f"{tag:28s} {backend:9s} {binary:6s} median {statistics.median(times):9.1f} us  "
              f"[{' '.join(f'{t:.1f}' for t in times)}] {sorted(set(r['refcheck_status'] for r in rs))} "
              f"MHz {' '.join(r.get('sm_clock_mhz', '') for r in rs)}")
