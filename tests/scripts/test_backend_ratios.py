#!/usr/bin/env python3
"""ctest BackendRatios.PlantedRun: scripts/backend_ratios.py on a synthetic kbench CSV with planted times.

Two cases (a top_p case and a top_k case), three backends each; flashinfer 2x and cub 10x slower than cuda
on the first, cuda slower than flashinfer on the second (0.5x) and cub's refcheck failed there. Checks the
table's cells and ratios, and that a case without the chosen backend is left out.

    test_backend_ratios.py SCRIPT
"""

import csv
import subprocess
import sys
import tempfile
from pathlib import Path

COLUMNS = ["routine", "median_time", "min_time", "backend", "batch_size", "vocab_size", "top_k", "case_tag", "refcheck_status",
           "sm_clock_mhz", "power_w"]


def row(routine, backend, ms, top_k, tag, status="passed", clock="1980"):
    return {"routine": routine, "median_time": ms, "min_time": ms, "backend": backend, "batch_size": "256", "vocab_size": "128256",
            "top_k": top_k, "case_tag": tag, "refcheck_status": status, "sm_clock_mhz": clock, "power_w": "300"}


def main(script):
    rows = [
        row("top_p_sampling_from_probs", "cuda", "0.050", "0", "p"),
        row("top_p_sampling_from_probs", "flashinfer", "0.100", "0", "p", clock="1755"),
        row("top_p_sampling_from_probs", "cub", "0.500", "0", "p"),
        row("top_k", "cuda", "0.200", "256", "k"),
        row("top_k", "flashinfer", "0.100", "256", "k"),
        row("top_k", "cub", "1.000", "256", "k", status="incorrect"),
        row("softmax", "flashinfer", "0.100", "0", "s"),
    ]
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "run.csv"
        with open(path, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
        out = subprocess.run([sys.executable, script, str(path)], capture_output=True, text=True, check=True).stdout
    lines = out.strip().splitlines()
    failures = []

    def expect(condition, what):
        if not condition:
            failures.append(what)

    expect(lines[0] == "| routine | case_tag | top_k | cuda us | flashinfer us | cub us | cuda vs flashinfer | "
                       "cuda vs cub |", "header: " + lines[0])
    expect(len(lines) == 4, f"2 cases (softmax has no cuda row): {len(lines) - 2} rows")
    expect(lines[2] == "| top_p_sampling_from_probs | p | 0 | 50.0 | 100.0 | 500.0 | 2.00x | 10.00x |",
           "top_p row (the clock differs between backends: still one case): " + lines[2])
    expect(lines[3] == "| top_k | k | 256 | 200.0 | 100.0 | incorrect | 0.50x | - |", "top_k row: " + lines[3])
    for failure in failures:
        print("FAILED:", failure)
    print(out)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
