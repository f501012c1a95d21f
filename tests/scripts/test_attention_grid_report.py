#!/usr/bin/env python3
"""ctest AttentionGridReport.CommittedGrid: scripts/attention_grid_report.py on the committed grid CSVs
(bench/results/h100/attention_grid/session16/: decode with FlashInfer built, prefill against cuDNN).

Checks the verdict against numbers read off those CSVs by hand: 64 points, the geometric means over
the points each yardstick ran, the prefill point with one query token a request (fa3 0.401x cuDNN)
among the misses; and, where matplotlib is importable, that --plot writes a PNG.

    test_attention_grid_report.py SCRIPT SOURCE_DIR WORK_DIR
"""

import subprocess
import sys
from pathlib import Path


def main(script, source, work):
    grid = Path(source) / "bench/results/h100/attention_grid/session16"
    csvs = [str(grid / "with_flashinfer/decode_grid.csv"), str(grid / "prefill_grid.csv")]
    out = subprocess.run([sys.executable, script] + csvs, capture_output=True, text=True, check=True).stdout
    brief = out[-1500:]
    rows = [line for line in out.splitlines() if line.startswith("| grid_")]
    assert len(rows) == 64, (len(rows), brief)
    assert "- geometric mean over 57 points, kbench's best vs cudnn: 1.0" in out, brief
    assert "- geometric mean over 34 points, kbench's best vs flashinfer: 1.0" in out, brief
    assert "grid_prefill_one_query" in out and "kbench fa3 0.401x cudnn" in out, brief
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("matplotlib not importable: --plot not checked")
        return 0
    Path(work).mkdir(parents=True, exist_ok=True)
    png = Path(work) / "grid.png"
    png.unlink(missing_ok=True)
    subprocess.run([sys.executable, script] + csvs + ["--plot", str(png)], capture_output=True, text=True, check=True)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
