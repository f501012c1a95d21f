#!/usr/bin/env python3
"""Backends side by side, as a markdown table: one row per case of kbench CSVs, each backend's median time
and the speedup of one backend (default cuda) over each of the others, all from the same run.

    backend_ratios.py [--backend cuda] [--against flashinfer,cub] [--columns batch_size,vocab_size,...] CSV...

A case is the rows that share every column but the measurement's (times, backend, clocks, refcheck outcome);
`--columns` picks the case columns shown (default: those that differ between cases, routine and case_tag
first). Speedup = the other backend's median time / the backend's (above 1: the backend is faster). A
backend whose refcheck did not pass is shown with its status instead of a time.
"""

import argparse
import csv
import sys

# Columns that describe a measurement rather than the case measured.
MEASUREMENT = {
    "median_time", "std_time", "tflops", "tb_per_sec", "backend", "resolved_backend", "autotuned", "autotune_winner",
    "autotune_tactic", "refcheck_passed", "repro_command", "timer", "calls_per_graph", "num_samples", "noise",
    "refcheck_status", "baseline", "speedup_over_baseline", "sm_clock_mhz", "sm_clock_min_mhz", "sm_clock_max_mhz",
    "memory_clock_mhz", "power_w", "power_max_w", "power_limit_w", "temperature_c", "throttle_reasons",
    "prequantized_median_time", "prequantized_std_time", "gpu_name", "min_time", "max_time",
}
PASSED = {"", "passed", "not_run"}


def read_cases(paths):
    """Cases in the order first seen: (key, {column: value}, {backend: row})."""
    cases = {}
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                key = tuple((c, v) for c, v in row.items() if c not in MEASUREMENT)
                case = cases.setdefault(key, (dict(key), {}))
                case[1][row["backend"]] = row
    return list(cases.values())


def shown_columns(cases, requested):
    if requested:
        return requested
    differing = [c for c in cases[0][0] if len({case[0].get(c, "") for case in cases}) > 1]
    first = [c for c in ("routine", "case_tag") if c in cases[0][0]]
    return first + [c for c in differing if c not in first]


def cell(row):
    if row is None:
        return "-"
    status = row.get("refcheck_status", "")
    if status not in PASSED:
        return status
    return f"{float(row['median_time']) * 1000:.1f}"


def table(cases, backend, against, columns):
    backends = [backend] + [b for b in against]
    head = columns + [f"{b} us" for b in backends] + [f"{backend} vs {b}" for b in against]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for values, rows in cases:
        if backend not in rows:
            continue
        mine = rows[backend]
        ratios = []
        for b in against:
            other = rows.get(b)
            ok = other is not None and other.get("refcheck_status", "") in PASSED and \
                mine.get("refcheck_status", "") in PASSED
            ratios.append(f"{float(other['median_time']) / float(mine['median_time']):.2f}x" if ok else "-")
        cells = [values.get(c, "") for c in columns] + [cell(rows.get(b)) for b in backends] + ratios
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv", nargs="+")
    parser.add_argument("--backend", default="cuda")
    parser.add_argument("--against", default="flashinfer,cub")
    parser.add_argument("--columns", default="")
    args = parser.parse_args(argv)
    cases = read_cases(args.csv)
    if not cases:
        print("backend_ratios.py: no rows in " + ", ".join(args.csv), file=sys.stderr)
        return 2
    against = [b for b in args.against.split(",") if b]
    columns = shown_columns(cases, [c for c in args.columns.split(",") if c])
    print(table(cases, args.backend, against, columns))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
