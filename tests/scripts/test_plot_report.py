#!/usr/bin/env python3
"""ctest PlotReport.DecodeSweep: scripts/plot_report.py on a synthetic kbench CSV with planted numbers.

A decode sweep (batch_size x s_kv for two KV dtypes, fa2 against fa2_tc, recorded --baseline fa2, fa2_tc 1.25x faster
at s_kv 1024 and 1.5x at 8192), a prefill case bound by compute and an rmsnorm case with a vendor
backend. Checks the PNGs, index.html and report.json: axes, series, baseline, speedups, metric.
Exits 77 (ctest's SKIP_RETURN_CODE) when matplotlib is not importable.

    test_plot_report.py SCRIPT WORK_DIR
"""

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

SKIP = 77
BATCH_SIZES = [1, 4, 16, 64]
SEQUENCE_LENGTHS = [1024, 8192]
SPEEDUP = {1024: 1.25, 8192: 1.5}
KV_DTYPES = ["bfloat16", "fp8_e4m3"]
GPU = "NVIDIA_H100_80GB_HBM3"
# A subset of kbench's columns, in its order (src/core/csv.cpp); the others would be empty.
COLUMNS = ["routine", "median_time", "std_time", "tflops", "tb_per_sec", "backend", "resolved_backend", "s_qo",
           "s_kv", "causal", "q_dtype", "kv_dtype", "avg_actual_seq_len", "batch_size", "hidden_size",
           "input_dtype", "num_qo_heads", "num_kv_heads", "page_size", "refcheck", "case_tag", "repro_command",
           "timer", "min_time", "max_time", "num_samples", "gpu_name", "refcheck_status", "baseline",
           "speedup_over_baseline"]


def rows():
    for kv_dtype, s_kv, batch_size in ((k, s, b) for k in KV_DTYPES for s in SEQUENCE_LENGTHS for b in BATCH_SIZES):
        fa2_ms = 0.01 * batch_size * s_kv / 1024
        for backend, median in (("fa2", fa2_ms), ("fa2_tc", fa2_ms / SPEEDUP[s_kv])):
            tb_per_sec = 2.5 * fa2_ms / median
            yield {"routine": "BatchDecodeWithPagedKVCacheWrapper", "backend": backend, "resolved_backend": backend,
                   "median_time": median, "std_time": median / 100, "tflops": tb_per_sec * 2,
                   "tb_per_sec": tb_per_sec, "s_kv": s_kv, "batch_size": batch_size, "q_dtype": "bfloat16",
                   "kv_dtype": kv_dtype, "avg_actual_seq_len": s_kv // 2, "num_qo_heads": 64,
                   "num_kv_heads": 8, "page_size": 16, "refcheck": "True", "case_tag": "decode_sweep",
                   "baseline": "fa2", "timer": "cupti", "num_samples": 30, "gpu_name": GPU,
                   "refcheck_status": "passed"}
    for backend, median in (("fa2", 12.0), ("fa3", 8.0), ("cudnn", 8.5)):
        yield {"routine": "BatchPrefillWithRaggedKVCacheWrapper", "backend": backend, "median_time": median,
               "std_time": 0.1, "tflops": 4400 / median, "tb_per_sec": 2.4 / median, "s_qo": 4096, "s_kv": 4096,
               "causal": "True", "batch_size": 16, "num_samples": 30, "gpu_name": GPU}
    for backend, median in (("cuda", 0.092), ("flashinfer", 0.108)):
        yield {"routine": "rmsnorm", "backend": backend, "median_time": median, "std_time": 0.001,
               "tflops": 0.01, "tb_per_sec": 0.268 / median, "batch_size": 8192, "hidden_size": 8192,
               "input_dtype": "bfloat16", "num_samples": 30, "gpu_name": GPU}


def check(condition, message):
    if not condition:
        print("FAIL: " + message)
        sys.exit(1)


def main(script, work):
    try:
        import matplotlib  # noqa: F401  (the script's one dependency)
    except ImportError as error:
        print(f"SKIP: matplotlib is not importable ({error}); python3 -m pip install matplotlib")
        return SKIP
    work = Path(work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    results = work / "decode_sweep.csv"
    with open(results, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows())
    out = work / "report"
    run = subprocess.run([sys.executable, script, str(results), "--out", str(out)], capture_output=True, text=True)
    print(run.stdout + run.stderr)
    check(run.returncode == 0, f"plot_report.py exited {run.returncode}")

    report = json.loads((out / "report.json").read_text())
    check(report["gpu"] == "H100 SXM" and report["peak_tbps"] == 3.35 and report["peak_tflops"] == 989,
          f"peaks of {GPU}: {report['gpu']}, {report['peak_tbps']}, {report['peak_tflops']}")
    sections = {(s["routine"], json.dumps(s["group"])): s for s in report["sections"]}
    decode_groups = [json.dumps({"kv_dtype": k}) for k in KV_DTYPES]
    expected_sections = {("BatchDecodeWithPagedKVCacheWrapper", group) for group in decode_groups} | {
        ("BatchPrefillWithRaggedKVCacheWrapper", "{}"), ("rmsnorm", "{}")}
    check(set(sections) == expected_sections, f"a section per routine and KV dtype: {sorted(sections)}")
    for group in decode_groups:
        decode = sections[("BatchDecodeWithPagedKVCacheWrapper", group)]
        check(decode["x"] == "batch_size" and decode["x_values"] == BATCH_SIZES,
              f"decode x: {decode['x']} {decode['x_values']}")
        check(decode["panel"] == "s_kv" and decode["panel_values"] == SEQUENCE_LENGTHS,
              f"decode panels: {decode['panel']} {decode['panel_values']}")
        check(decode["backends"] == ["fa2", "fa2_tc"] and decode["baseline"] == "fa2",
              f"decode backends {decode['backends']}, baseline {decode['baseline']} (the CSV's)")
        check(decode["metric"] == "tb_per_sec", f"decode is bound by memory: {decode['metric']}")
        speedups = {(p["panel"], p["x"]): p["speedup"] for p in decode["points"] if p["backend"] == "fa2_tc"}
        check(len(speedups) == len(BATCH_SIZES) * len(SEQUENCE_LENGTHS), f"a speedup per point: {speedups}")
        for (s_kv, batch_size), speedup in speedups.items():
            check(abs(speedup - SPEEDUP[s_kv]) < 1e-9, f"speedup at s_kv {s_kv}, batch {batch_size}: {speedup}")
        fraction = next(p["fraction_of_peak"] for p in decode["points"] if p["backend"] == "fa2")
        check(abs(fraction - 2.5 / 3.35) < 1e-9, f"fa2's fraction of the HBM peak: {fraction}")
    prefill = sections[("BatchPrefillWithRaggedKVCacheWrapper", "{}")]
    check(prefill["metric"] == "tflops" and prefill["baseline"] == "cudnn",
          f"prefill: bound by compute, baseline the first vendor backend: {prefill['metric']}, {prefill['baseline']}")
    rmsnorm = sections[("rmsnorm", "{}")]
    check(rmsnorm["baseline"] == "flashinfer" and rmsnorm["x"] is None, f"rmsnorm: {rmsnorm['baseline']}, {rmsnorm['x']}")

    for section in report["sections"]:
        check(set(section["images"]) == {"time", "throughput", "speedup"}, f"charts of {section['routine']}: {section['images']}")
        for image in section["images"].values():
            data = (out / image).read_bytes()
            check(data.startswith(b"\x89PNG") and len(data) > 5000, f"{image}: not a PNG with a chart")
    index = (out / "index.html").read_text()
    images = [image for section in report["sections"] for image in section["images"].values()]
    for expected in ["fa2_tc", "cudnn", "flashinfer", "kv_dtype=fp8_e4m3", "x: batch_size; panels: s_kv", *images]:
        check(expected in index, f"index.html names {expected}")

    bad = subprocess.run([sys.executable, script, str(work / "missing.csv"), "--out", str(out)],
                         capture_output=True, text=True)
    check(bad.returncode == 2 and "cannot read" in bad.stderr, f"an unreadable CSV: {bad.returncode} {bad.stderr}")
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
