#!/usr/bin/env python3
"""kbench's plot report: result CSVs as charts a person would rather read than the CSV.

    python3 scripts/plot_report.py RESULTS.csv [MORE.csv ...] --out DIR [--baseline BACKEND]

For every routine, and every combination of the configuration values that are neither the swept
axis nor the panel axis (e.g. the dtypes of the decode sweep), DIR gets three PNGs:
  - median time per backend over the swept axis (x), one panel per value of the panel axis;
  - throughput, tb_per_sec or tflops, whichever is the larger fraction of the GPU's peak (what the
    routine is bound by), with that fraction (the roofline fraction) on the right-hand axis;
  - speedup over the baseline backend (baseline time / backend time) per point: one panel per
    backend, one line per value of the panel axis (for samples/decode_sweep.txt: speedup against
    batch size, one line per sequence length).
plus index.html (the charts, and a short table per section) and report.json (the same numbers,
for programs).

Axes: the swept axis (--x) is the numeric configuration column with the most distinct values,
ties going to batch_size, num_tokens, m, s_qo, s_kv, seq_len in that order; the panel axis
(--panel) the next one by the same rule. The configuration columns are those of `kbench compare`
(src/core/compare.hpp): every non-empty column except the measurements and the run's records.
Baseline: --baseline, else the backend the run named (the CSV's `baseline` column, from kbench
--baseline), else the first backend that is not kbench's own (cudnn, flashinfer, ...), else none.
Peaks: by gpu_name (H100 SXM: 3.35 TB/s HBM, 989 dense bf16 TFLOP/s; H100 PCIe/NVL, H200 SXM/NVL),
or --peak_tbps / --peak_tflops.
Exit status: 0 the report was written, 2 usage error (an unreadable or foreign CSV, no measured row),
3 matplotlib is not importable (python3 -m pip install matplotlib).
"""

import argparse
import csv
import html
import json
import math
import re
import statistics
import sys
import textwrap
from collections import Counter
from pathlib import Path

KBENCH_BACKENDS = {"cuda", "fa2", "fa2_tc", "fa3", "auto"}

# Never part of a case's configuration: the measurements, the GPU's conditions and the run's records,
# exactly kbench compare's list (src/core/compare.cpp; a CPU test keeps the two equal), plus any
# column whose name holds "clock" or "power".
NOT_CONFIGURATION = {
    "median_time", "std_time", "min_time", "max_time", "num_samples", "noise", "tflops", "tb_per_sec",
    "resolved_backend", "avg_actual_seq_len", "refcheck_status", "speedup_over_baseline", "samples_ms",
    "disposition", "reason", "mean_time", "noise_reached", "autotuned",
    "temperature_c", "throttle_reasons", "conditions_unavailable",
    "repro_command", "gpu_name", "timer", "calls_per_graph", "use_cupti", "output_path", "baseline_csv",
    "baseline", "case_tag", "refcheck", "allow_output_mismatch", "generate_repro_command", "json",
    "json_samples", "verbose",
    "routine", "backend",
}

AXIS_PREFERENCE = ["batch_size", "num_tokens", "m", "s_qo", "s_kv", "seq_len"]

# (words of the upper-cased gpu_name, name, HBM TB/s, dense bf16 TFLOP/s), most specific first.
GPU_PEAKS = [
    (("H100", "PCIE"), "H100 PCIe", 2.0, 756.0),
    (("H100", "NVL"), "H100 NVL", 3.9, 835.0),
    (("H100",), "H100 SXM", 3.35, 989.0),
    (("H200", "NVL"), "H200 NVL", 4.8, 835.0),
    (("H200",), "H200 SXM", 4.8, 989.0),
]
# Only to choose between tb_per_sec and tflops on an unknown GPU: the ratio of the peaks is what
# matters there, and it is alike across datacenter GPUs.
CHOICE_PEAKS = {"tb_per_sec": 3.35, "tflops": 989.0}

METRIC_UNITS = {"tb_per_sec": "TB/s", "tflops": "TFLOP/s"}


class UsageError(Exception):
    pass


def number(text):
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def is_configuration(column):
    return column not in NOT_CONFIGURATION and "clock" not in column and "power" not in column


def configuration(row):
    return {column: value for column, value in row.items() if value and column and is_configuration(column)}


def read_rows(paths):
    """The measured rows of every file; a case measured twice keeps its last row."""
    rows = {}
    for path in paths:
        try:
            with open(path, newline="") as f:
                reader = csv.DictReader(f)
                missing = {"routine", "backend", "median_time"} - set(reader.fieldnames or [])
                if missing:
                    raise UsageError(f"{path} is not a kbench CSV: no {', '.join(sorted(missing))} column")
                for row in reader:
                    if number(row.get("median_time")) is None:
                        continue
                    key = (row["routine"], row["backend"], tuple(sorted(configuration(row).items())))
                    if key in rows:
                        print(f"plot_report: {path}: a case measured again replaces the earlier row "
                              f"({row['routine']} {row['backend']})", file=sys.stderr)
                    rows[key] = row
        except OSError as error:
            raise UsageError(f"cannot read {path}: {error.strerror}") from error
    if not rows:
        raise UsageError("no measured rows in " + ", ".join(paths))
    return list(rows.values())


def gpu_peaks(gpu_name, peak_tbps, peak_tflops):
    """(label, TB/s, TFLOP/s) for the GPU; the overrides win; None where unknown."""
    words = gpu_name.upper().replace("_", " ").replace("-", " ")
    label, tbps, tflops = gpu_name or "unknown GPU", None, None
    for required, name, known_tbps, known_tflops in GPU_PEAKS:
        if all(word in words for word in required):
            label, tbps, tflops = name, known_tbps, known_tflops
            break
    return label, peak_tbps or tbps, peak_tflops or tflops


def ordered(values):
    """Distinct values: by value when all are numbers, else in the order first seen (a testlist's)."""
    values = list(dict.fromkeys(values))
    return sorted(values, key=number) if all(number(v) is not None for v in values) else values


def distinct_values(rows, column):
    return ordered(configuration(row).get(column, "") for row in rows)


def pick_axis(candidates, rows, asked, role):
    """The column `asked` for where it varies, else the numeric one with the most distinct values
    (AXIS_PREFERENCE breaks ties)."""
    if asked in candidates:
        return asked
    if asked:
        print(f"plot_report: --{role} {asked} does not vary among the rows of {rows[0]['routine']}; "
              "choosing by the rule", file=sys.stderr)
    if not candidates:
        return None

    def rank(column):
        values = distinct_values(rows, column)
        numeric = all(number(v) is not None for v in values if v)
        preference = AXIS_PREFERENCE.index(column) if column in AXIS_PREFERENCE else len(AXIS_PREFERENCE)
        return (not numeric, -len(values), preference, candidates.index(column))

    return min(candidates, key=rank)


def choose_baseline(rows, backends, asked):
    if asked:
        if asked not in backends:
            print(f"plot_report: --baseline {asked}: not among the backends of {rows[0]['routine']}", file=sys.stderr)
        return asked if asked in backends else None
    recorded = [row.get("baseline") for row in rows if row.get("baseline") in backends]
    if recorded:
        return recorded[0]
    return next((backend for backend in backends if backend not in KBENCH_BACKENDS), None)


def slug(text):
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:120]


def json_value(text):
    numeric = number(text)
    if numeric is None:
        return text
    return int(numeric) if numeric.is_integer() else numeric


class Section:
    """Charts of one routine: its points keyed by backend, x value and panel value. `x_of` and
    `panel_of` give a row's values on the two axes."""

    def __init__(self, routine, group, x, panel, rows, x_of, panel_of, metric, peak, baseline):
        self.routine, self.group, self.x, self.panel = routine, group, x, panel
        self.metric, self.peak, self.baseline = metric, peak, baseline
        self.backends = list(dict.fromkeys(row["backend"] for row in rows))
        self.x_values = ordered(x_of(row) for row in rows)
        self.panel_values = ordered(panel_of(row) for row in rows)
        by_case = {(row["backend"], x_of(row), panel_of(row)): row for row in rows}
        self.points = []
        for (backend, x_value, panel_value), row in by_case.items():
            median = number(row["median_time"])
            throughput = number(row.get(metric))
            base_row = by_case.get((baseline, x_value, panel_value)) if baseline else None
            self.points.append({
                "backend": backend, "x": x_value, "panel": panel_value, "median_ms": median,
                "throughput": throughput,
                "fraction_of_peak": throughput / peak if throughput is not None and peak else None,
                "speedup": number(base_row["median_time"]) / median if base_row and backend != baseline else None,
            })
        self.name = slug("_".join([routine] + [f"{c}-{v}" for c, v in group] + ([x] if x == "case" else [])))
        self.images = {}

    def series(self, backend, panel_value, field):
        points = {p["x"]: p[field] for p in self.points
                  if p["backend"] == backend and p["panel"] == panel_value and p[field] is not None}
        xs = [x for x in self.x_values if x in points]
        return xs, [points[x] for x in xs]

    def title(self):
        return self.routine + ("  (" + ", ".join(f"{c}={v}" for c, v in self.group) + ")" if self.group else "")


def draw(plt, path, title, panels, x_values, x_label, y_label, log_y, peak=None, reference_line=None):
    """panels: [(panel title, [(line label, xs, ys)])] -> one PNG."""
    columns = min(len(panels), 4)
    rows = math.ceil(len(panels) / columns)
    figure, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.3 * rows + 0.6), squeeze=False)
    numeric_x = all(number(v) is not None for v in x_values)
    positions = {v: (number(v) if numeric_x else i) for i, v in enumerate(x_values)}
    log_x = numeric_x and min(positions.values()) > 0 and max(positions.values()) >= 8 * min(positions.values())
    for ax, (panel_title, lines) in zip(axes.flat, panels):
        for label, xs, ys in lines:
            # Lines join the points of a sweep; the cases of a categorical axis are not a curve.
            ax.plot([positions[x] for x in xs], ys, marker="o", markersize=3.5, linewidth=1.4 if numeric_x else 0,
                    label=label)
        if log_x:
            ax.set_xscale("log", base=2)
        if log_y:
            ax.set_yscale("log")
        long_labels = sum(len(v) for v in x_values) > 40
        ax.set_xticks(list(positions.values()), [v or "-" for v in x_values], fontsize=7,
                      rotation=30 if long_labels else 0, ha="right" if long_labels else "center")
        ax.minorticks_off()
        if reference_line is not None:
            ax.axhline(reference_line, color="grey", linewidth=0.8, linestyle="--")
        if peak:
            secondary = ax.secondary_yaxis("right", functions=(lambda v: 100.0 * v / peak, lambda f: f * peak / 100.0))
            secondary.set_ylabel("% of peak", fontsize=8)
        ax.set_title(panel_title, fontsize=9)
        ax.set_xlabel(x_label, fontsize=8)
        ax.set_ylabel(y_label, fontsize=8)
        ax.grid(True, alpha=0.3)
        if lines:
            ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    figure.suptitle(textwrap.fill(title, width=45 * columns), fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def draw_section(plt, out, section):
    x_label = section.x or "case"
    panel_titles = [f"{section.panel}={v}" if section.panel else "" for v in section.panel_values]

    def by_backend(field):
        return [(title, [(backend, *section.series(backend, value, field)) for backend in section.backends])
                for title, value in zip(panel_titles, section.panel_values)]

    section.images["time"] = f"{section.name}_time.png"
    draw(plt, out / section.images["time"], section.title() + ": median time", by_backend("median_ms"),
         section.x_values, x_label, "median time (ms)", log_y=True)
    unit = METRIC_UNITS[section.metric]
    section.images["throughput"] = f"{section.name}_{section.metric}.png"
    draw(plt, out / section.images["throughput"], section.title() + f": {section.metric} ({unit})",
         by_backend("throughput"), section.x_values, x_label, unit, log_y=False, peak=section.peak)
    candidates = [b for b in section.backends if b != section.baseline]
    if section.baseline and candidates:
        panels = [(f"{backend} over {section.baseline}",
                   [(title or backend, *section.series(backend, value, "speedup"))
                    for title, value in zip(panel_titles, section.panel_values)])
                  for backend in candidates]
        section.images["speedup"] = f"{section.name}_speedup.png"
        draw(plt, out / section.images["speedup"], section.title() + f": speedup over {section.baseline}", panels,
             section.x_values, x_label, f"{section.baseline} time / backend time", log_y=False, reference_line=1.0)


def case_labels(rows, columns):
    """A name per case (its values of `columns`): the case tags where they tell the cases apart,
    else column=value pairs."""
    def values(row):
        config = configuration(row)
        return tuple(config.get(c, "") for c in columns)

    tags = {}
    for row in rows:
        tags.setdefault(values(row), set()).add(row.get("case_tag", ""))
    names = [next(iter(t)) for t in tags.values() if len(t) == 1]
    use_tags = len(names) == len(tags) and all(names) and len(set(names)) == len(names)
    return lambda row: (next(iter(tags[values(row)])) if use_tags
                        else ", ".join(f"{c}={v}" for c, v in zip(columns, values(row))))


def build_sections(rows, args):
    """Per routine: one section per combination of the varying columns other than x and panel
    that sweeps x or panel; the combinations that hold a single case share one section whose x
    axis names the cases."""
    sections = []
    gpu_names = Counter(row.get("gpu_name", "") for row in rows)
    if len(gpu_names) > 1:
        print(f"plot_report: rows from several GPUs ({', '.join(sorted(gpu_names))}); peaks of the most common",
              file=sys.stderr)
    gpu_label, peak_tbps, peak_tflops = gpu_peaks(gpu_names.most_common(1)[0][0], args.peak_tbps, args.peak_tflops)
    peaks = {"tb_per_sec": peak_tbps, "tflops": peak_tflops}
    for routine in dict.fromkeys(row["routine"] for row in rows):
        routine_rows = [row for row in rows if row["routine"] == routine]
        columns = list(dict.fromkeys(c for row in routine_rows for c in configuration(row)))
        varying = [c for c in columns if len(distinct_values(routine_rows, c)) > 1]
        x = pick_axis(varying, routine_rows, args.x, "x")
        panel = pick_axis([c for c in varying if c != x], routine_rows, args.panel, "panel")
        group_columns = [c for c in varying if c not in (x, panel)]

        def median_fraction(metric):
            values = [number(row.get(metric)) for row in routine_rows]
            values = [v for v in values if v is not None]
            return statistics.median(values) / (peaks[metric] or CHOICE_PEAKS[metric]) if values else -1.0

        metric = max(("tb_per_sec", "tflops"), key=median_fraction)
        backends = list(dict.fromkeys(row["backend"] for row in routine_rows))
        baseline = choose_baseline(routine_rows, backends, args.baseline)

        def x_of(row):
            return configuration(row).get(x, "") if x else ""

        def panel_of(row):
            return configuration(row).get(panel, "") if panel else ""

        groups = {}
        for row in routine_rows:
            config = configuration(row)
            groups.setdefault(tuple((c, config.get(c, "")) for c in group_columns), []).append(row)
        single_cases = []
        for group, group_rows in groups.items():
            if len(groups) > 1 and len({(x_of(r), panel_of(r)) for r in group_rows}) == 1:
                single_cases += group_rows
            else:
                sections.append(Section(routine, group, x, panel, group_rows, x_of, panel_of, metric,
                                        peaks[metric], baseline))
        if single_cases:
            sections.append(Section(routine, (), "case", None, single_cases, case_labels(single_cases, varying),
                                    lambda row: "", metric, peaks[metric], baseline))
    return gpu_label, peaks, sections


def range_text(values, fmt):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    low, high = min(values), max(values)
    return fmt.format(low) if low == high else fmt.format(low) + " - " + fmt.format(high)


def write_index(out, inputs, gpu_label, peaks, sections):
    peak_text = ", ".join(f"{peaks[m]:g} {METRIC_UNITS[m]}" for m in peaks if peaks[m]) or "unknown (--peak_tbps, --peak_tflops)"
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>kbench report</title><style>"
        "body{font-family:sans-serif;margin:2em;max-width:1800px}table{border-collapse:collapse;margin:.5em 0}"
        "td,th{border:1px solid #ccc;padding:.2em .6em;text-align:right}td:first-child,th{text-align:left}"
        "img{max-width:100%;border:1px solid #eee;margin:.3em 0}</style></head><body>",
        "<h1>kbench report</h1>",
        f"<p>{html.escape(', '.join(inputs))}<br>GPU: {html.escape(gpu_label)}; peaks: {html.escape(peak_text)}</p>",
    ]
    for section in sections:
        unit = METRIC_UNITS[section.metric]
        parts.append(f"<h2 id='{section.name}'>{html.escape(section.title())}</h2>")
        axes = f"x: {section.x or '-'}" + (f"; panels: {section.panel}" if section.panel else "")
        parts.append(f"<p>{html.escape(axes)}; bound by {section.metric}; baseline: {html.escape(section.baseline or 'none')}</p>")
        parts.append("<table><tr><th>backend</th><th>points</th><th>median time (ms)</th>"
                     f"<th>best {section.metric} ({unit})</th><th>best % of peak</th>"
                     f"<th>speedup over {html.escape(section.baseline or '-')} (min - max, geomean)</th></tr>")
        for backend in section.backends:
            points = [p for p in section.points if p["backend"] == backend]
            throughputs = [p["throughput"] for p in points if p["throughput"] is not None]
            fractions = [p["fraction_of_peak"] for p in points if p["fraction_of_peak"] is not None]
            speedups = [p["speedup"] for p in points if p["speedup"] is not None]
            geomean = f", {math.exp(statistics.fmean(math.log(s) for s in speedups)):.3f}x" if speedups else ""
            parts.append(f"<tr><td>{html.escape(backend)}</td><td>{len(points)}</td>"
                         f"<td>{range_text([p['median_ms'] for p in points], '{:.4g}')}</td>"
                         f"<td>{f'{max(throughputs):.3f}' if throughputs else '-'}</td>"
                         f"<td>{f'{100 * max(fractions):.1f}%' if fractions else '-'}</td>")
            parts.append(f"<td>{range_text(speedups, '{:.3f}x')}{geomean}</td></tr>")
        parts.append("</table>")
        for kind in ("speedup", "throughput", "time"):
            if kind in section.images:
                parts.append(f"<p><img src='{section.images[kind]}' alt='{section.name} {kind}'></p>")
    parts.append("</body></html>")
    (out / "index.html").write_text("\n".join(parts) + "\n")


def write_json(out, inputs, gpu_label, peaks, sections):
    report = {
        "inputs": inputs,
        "gpu": gpu_label,
        "peak_tbps": peaks["tb_per_sec"],
        "peak_tflops": peaks["tflops"],
        "sections": [{
            "routine": s.routine,
            "group": {c: json_value(v) for c, v in s.group},
            "x": s.x,
            "x_values": [json_value(v) for v in s.x_values],
            "panel": s.panel,
            "panel_values": [json_value(v) for v in s.panel_values],
            "metric": s.metric,
            "baseline": s.baseline,
            "backends": s.backends,
            "images": s.images,
            "points": [dict(p, x=json_value(p["x"]), panel=json_value(p["panel"])) for p in s.points],
        } for s in sections],
    }
    (out / "report.json").write_text(json.dumps(report, indent=1) + "\n")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     epilog="See the top of this script for the rules.")
    parser.add_argument("results", nargs="+", help="kbench result CSVs")
    parser.add_argument("--out", required=True, help="folder for the PNGs, index.html and report.json")
    parser.add_argument("--baseline", help="backend the speedups are over (default: see the top of this script)")
    parser.add_argument("--x", help="the swept axis (a configuration column)")
    parser.add_argument("--panel", help="one panel per value of this column")
    parser.add_argument("--peak_tbps", type=float, help="the GPU's memory bandwidth, TB/s")
    parser.add_argument("--peak_tflops", type=float, help="the GPU's dense TFLOP/s for these dtypes")
    args = parser.parse_args(argv)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:
        print(f"plot_report: needs matplotlib (python3 -m pip install matplotlib): {error}", file=sys.stderr)
        return 3
    try:
        rows = read_rows(args.results)
        gpu_label, peaks, sections = build_sections(rows, args)
    except UsageError as error:
        print(f"plot_report: {error}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for section in sections:
        draw_section(plt, out, section)
    write_index(out, args.results, gpu_label, peaks, sections)
    write_json(out, args.results, gpu_label, peaks, sections)
    images = sum(len(s.images) for s in sections)
    print(f"plot_report: {len(sections)} sections, {images} charts: {out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
