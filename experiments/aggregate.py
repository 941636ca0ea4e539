"""Collect a multirun directory into one table and plots.

``python -m experiments.aggregate <dir>`` finds every run (a directory with ``summary.json``) under
``<dir>`` and writes, into ``<dir>``:

* ``results.csv`` / ``results.md``  one row per run: label, game, components, representation size
  and % of game, iterations, final exploitability (chips, mbb/g), solve seconds, status;
* ``exploitability_vs_size.{png,svg}``  final exploitability against representation size (% of
  game), linear and log axes (the layout of Morrill 2016, Fig. 4.1 / 4.3), one curve per label;
* ``convergence.{png,svg}``  exploitability against iterations and against solve seconds.

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
           "run"]
PLOT_NAMES = ("exploitability_vs_size", "convergence")
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
    table = markdown(rows)
    atomic_write(directory / "results.md", lambda f: f.write(table.encode()))
    files = [directory / "results.csv", directory / "results.md"]
    if plots:
        files += plot(directory, rows, curves)
    return Aggregate(directory, rows, curves, files)


def report(result: Aggregate) -> str:
    plots = [str(p) for p in result.files if p.suffix == ".png"]
    return (f"\n{markdown(result.rows)}\n{len(result.rows)} runs in {result.directory}\n"
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
