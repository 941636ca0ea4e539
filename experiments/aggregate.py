"""Collect a multirun directory into one table and plots.

``python -m experiments.aggregate <dir>`` finds every run (a directory with ``summary.json``) under
``<dir>`` and writes, into ``<dir>``:

* ``results.csv`` / ``results.md``  one row per run: label, game, components, representation size
  and % of game, iterations, final exploitability (chips, mbb/g), solve seconds, status;
* ``exploitability_vs_size.{png,svg}``  final exploitability against representation size (% of
  game), linear and log axes (the layout of Morrill 2016, Fig. 4.1 / 4.3), one curve per label;
* ``convergence.{png,svg}``  exploitability against iterations and against solve seconds;
* ``exploitability_vs_nodes.{png,svg}`` (runs with a node budget) exploitability against nodes
  touched, log-log, one panel per game, the mean over seeds with 95% confidence intervals (Lanctot 2013,
  Fig. 4.5); ``results.md`` then adds the final means per game and label.

Runs of several seeds with the same label and size are averaged in the plots; the size plot shows
complete runs only (an interrupted run is in the table, with its status, and in the convergence plot).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rcfr.files import atomic_write

COLUMNS = ["label", "game", "solver", "regressor", "features", "abstraction", "seed", "status", "iteration",
           "representation_size", "representation_pct", "exploitability", "exploitability_mbb", "seconds",
           "max_nodes_touched", "run"]
PLOT_NAMES = ("exploitability_vs_size", "convergence", "exploitability_vs_nodes")
MARKERS = "osD^v<>ph*X"
LINESTYLES = ("-", "--", ":")


@dataclass
class Aggregate:
    directory: Path
    rows: list[dict]
    curves: dict[str, list[dict]]  # run -> metrics rows
    files: list[Path]


def find_runs(directory: Path) -> list[Path]:
    return sorted((p.parent for p in directory.rglob("summary.json") if ".hydra" not in p.parts),
                  key=lambda p: [int(s) if s.isdigit() else s for s in p.relative_to(directory).parts])


def _read_metrics(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with path.open() as f:
        return [{k: float(v) if v else None for k, v in row.items()} for row in csv.DictReader(f)]


def collect(directory: Path) -> tuple[list[dict], dict[str, list[dict]]]:
    rows, curves = [], {}
    for run in find_runs(directory):
        summary = json.loads((run / "summary.json").read_text())
        name = str(run.relative_to(directory)) or "."
        rows.append({**{k: summary.get(k) for k in COLUMNS}, "run": name})
        curves[name] = _read_metrics(run / "metrics.csv")
    rows.sort(key=lambda r: (r["game"], r["label"], r["representation_size"] or 0, r["seed"] or 0))
    return rows, curves


def _fmt(value, digits: int = 4) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return str(value)


def markdown(rows: list[dict]) -> str:
    head = ["label", "game", "size", "% of game", "iterations", "exploitability (chips)", "mbb/g",
            "seconds", "status"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["label"], r["game"], _fmt(r["representation_size"]), _fmt(r["representation_pct"], 3),
                 _fmt(r["iteration"]), _fmt(r["exploitability"]), _fmt(r["exploitability_mbb"]),
                 _fmt(r["seconds"], 3), r["status"]]
        lines.append("| " + " | ".join(map(str, cells)) + " |")
    return "\n".join(lines) + "\n"


def mean_ci(values) -> tuple[float, float]:
    """Mean and the half-width of its 95% confidence interval (Student t; 0 for a single value)."""
    from scipy import stats

    values = np.asarray(values, dtype=float)
    if len(values) < 2:
        return float(values.mean()), 0.0
    return float(values.mean()), float(stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values)))


def node_curves(rows: list[dict], curves: dict[str, list[dict]]) -> dict[tuple[str, str], list[tuple]]:
    """(game, label) -> per point: (nodes touched, mean exploitability, CI half-width, seeds) over the
    runs (seeds) of that label that ran on a node budget (``run.max_nodes_touched``). Seeds evaluate at slightly different
    node counts, so each curve is interpolated (log-log) at the first seed's evaluation points that
    every seed covers, and at the end of the shortest."""
    runs = defaultdict(list)
    for r in rows:
        if not r.get("max_nodes_touched"):
            continue
        curve = [c for c in curves.get(r["run"], []) if c.get("nodes_touched") is not None]
        if curve:
            runs[(r["game"], r["label"])].append(curve)
    table = {}
    for key, group in sorted(runs.items()):
        xs = [np.log([c["nodes_touched"] for c in curve]) for curve in group]
        ys = [np.log([c["exploitability"] for c in curve]) for curve in group]
        low, high = max(x[0] for x in xs), min(x[-1] for x in xs)
        grid = [g for g in xs[0] if low <= g < high] + [high]
        table[key] = [(float(np.exp(g)), *mean_ci([np.exp(np.interp(g, x, y)) for x, y in zip(xs, ys)]), len(group))
                      for g in grid]
    return table


def node_markdown(table: dict[tuple[str, str], list[tuple]]) -> str:
    head = ["game", "label", "seeds", "nodes touched", "exploitability (chips)", "95% CI"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (game, label), points in table.items():
        nodes, mean, half, seeds = points[-1]
        half = 0.0 if half <= 1e-9 * mean else half  # interpolation round-off between identical seeds
        lines.append(f"| {game} | {label} | {seeds} | {nodes:.3g} | {mean:.4g} | ±{half:.2g} |")
    return "\n".join(lines) + "\n"


def plot_nodes(directory: Path, table: dict[tuple[str, str], list[tuple]]) -> list[Path]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    games = sorted({g for g, _ in table})
    cols = min(3, len(games))
    rows = (len(games) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 4 * rows), squeeze=False)
    labels = sorted({label for _, label in table})
    for ax, game in zip(axes.flat, games):
        for label, points in ((lab, p) for (g, lab), p in table.items() if g == game):
            i = labels.index(label)
            x, y, half = (np.array([p[j] for p in points]) for j in range(3))
            ax.errorbar(x, y, yerr=np.minimum(half, 0.999 * y), marker=MARKERS[i % len(MARKERS)], markersize=3,
                        capsize=2, color=plt.cm.tab10(i % 10), label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("nodes touched")
        ax.set_ylabel("exploitability (chips)")
        ax.set_title(game, fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(games):]:
        ax.set_visible(False)
    fig.tight_layout()
    files = _save_figure(fig, directory, "exploitability_vs_nodes")
    plt.close(fig)
    return files


def _save_figure(fig, directory: Path, name: str) -> list[Path]:
    paths = []
    for ext in ("png", "svg"):
        path = directory / f"{name}.{ext}"
        buffer = io.BytesIO()
        fig.savefig(buffer, format=ext, dpi=120, bbox_inches="tight")
        atomic_write(path, lambda f: f.write(buffer.getvalue()))
        paths.append(path)
    return paths


def plot(directory: Path, rows: list[dict], curves: dict[str, list[dict]]) -> list[Path]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    games = sorted({r["game"] for r in rows})
    done = [r for r in rows if r["status"] == "complete" and r["exploitability_mbb"] is not None
            and r["representation_pct"] is not None]  # a size-vs-exploitability plot needs both
    files: list[Path] = []

    fig, axes = plt.subplots(len(games), 2, figsize=(11, 4 * len(games)), squeeze=False)
    for g, game in enumerate(games):
        by_label = defaultdict(lambda: defaultdict(list))
        for r in done:
            if r["game"] == game:
                by_label[r["label"]][r["representation_pct"]].append(r["exploitability_mbb"])
        for ax, scale in zip(axes[g], ("linear", "log")):
            for i, (label, points) in enumerate(sorted(by_label.items())):
                xs = sorted(points)
                ys = [float(np.mean(points[x])) for x in xs]
                ax.plot(xs, ys, marker=MARKERS[i % len(MARKERS)], color=plt.cm.tab20(i % 20), label=label)
            ax.set_xscale(scale)
            ax.set_yscale("log")
            ax.set_xlabel("representation size (% of game)")
            ax.set_ylabel("exploitability (mbb/g)")
            ax.set_title(f"{game}" if len(games) > 1 else f"final exploitability ({scale} x axis)", fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
        if by_label:
            axes[g][1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5))
    files += _save_figure(fig, directory, "exploitability_vs_size")
    plt.close(fig)

    fig, axes = plt.subplots(len(games), 2, figsize=(11, 4 * len(games)), squeeze=False)
    sizes_per_label = defaultdict(set)
    for r in rows:
        sizes_per_label[(r["game"], r["label"])].add(r["representation_size"])
    for g, game in enumerate(games):
        styles = {}
        for r in rows:
            curve = curves.get(r["run"], [])
            if r["game"] != game or not curve:
                continue
            name = r["label"]
            if len(sizes_per_label[(game, name)]) > 1:
                name += f" ({_fmt(r['representation_pct'], 3)}%)"
            ys = [c["exploitability_mbb"] for c in curve]
            i = styles.setdefault(r["label"], len(styles))
            for ax, key in zip(axes[g], ("iteration", "seconds")):
                ax.plot([c[key] for c in curve], ys, color=plt.cm.tab20(i % 20),
                        linestyle=LINESTYLES[(i // 20) % len(LINESTYLES)], label=name)
        for ax, key in zip(axes[g], ("iterations", "solve seconds (evaluation excluded)")):
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel(key)
            ax.set_ylabel("exploitability (mbb/g)")
            ax.set_title(game, fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
        if axes[g][1].lines:
            axes[g][1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5))
    files += _save_figure(fig, directory, "convergence")
    plt.close(fig)
    return files


def aggregate(directory: str | Path, *, plots: bool = True) -> Aggregate | None:
    """Write the tables (and plots) of every run under `directory`; None when it holds no run."""
    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(f"no such directory: {directory}")
    rows, curves = collect(directory)
    if not rows:
        return None
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    atomic_write(directory / "results.csv", lambda f: f.write(text.getvalue().encode()))
    by_nodes = node_curves(rows, curves)
    table = markdown(rows) + (f"\nMean over seeds at the last evaluation:\n\n{node_markdown(by_nodes)}"
                              if by_nodes else "")
    atomic_write(directory / "results.md", lambda f: f.write(table.encode()))
    files = [directory / "results.csv", directory / "results.md"]
    if plots:
        files += plot(directory, rows, curves)
        if by_nodes:
            files += plot_nodes(directory, by_nodes)
    return Aggregate(directory, rows, curves, files)


def report(result: Aggregate) -> str:
    plots = [str(p) for p in result.files if p.suffix == ".png"]
    by_nodes = node_curves(result.rows, result.curves)
    extra = f"\n{node_markdown(by_nodes)}" if by_nodes else ""
    return (f"\n{markdown(result.rows)}{extra}\n{len(result.rows)} runs in {result.directory}\n"
            f"table: {result.directory / 'results.csv'}\nplots: {', '.join(plots)}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.aggregate", description=__doc__.split("\n")[0])
    parser.add_argument("directory", help="a multirun (sweep) directory, or any directory holding runs")
    parser.add_argument("--no-plots", action="store_true", help="write the tables only")
    args = parser.parse_args(argv)
    try:
        result = aggregate(args.directory, plots=not args.no_plots)
    except FileNotFoundError as err:
        print(err, file=sys.stderr)
        return 2
    if result is None:
        print(f"no runs (summary.json) under {args.directory}", file=sys.stderr)
        return 1
    print(report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
