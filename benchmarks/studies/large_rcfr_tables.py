"""Tables of issue 13's comparison (docs/large_rcfr.md, "The comparison") from a large_rcfr(_quick) sweep.

    python -m benchmarks.studies.large_rcfr_tables <sweep directory> [<sweep directory> ...]

Prints, per game, (1) the final numbers of every configuration, seeds pooled (size %, nodes touched,
solve CPU seconds, exploitability mean and 95% half-width, peak and private resident memory), and (2)
every curve read off at each RCFR configuration's final nodes touched and final CPU seconds (the mean
over seeds, interpolated log-log by `rcfr.experiments.aggregate.node_curves`; where a curve ends earlier, its
last value and where it ends, in parentheses).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from rcfr.experiments.pooling import node_curves, pool  # noqa: E402
from rcfr.experiments.runs import collect  # noqa: E402


def _at(points: list[tuple], x: float) -> str:
    """A curve's mean exploitability at `x` (log-log interpolation); past its end, "(v at x_end)": its
    last value, reached earlier; before its start, "-"."""
    xs = [p[0] for p in points]
    if x > xs[-1] * (1 + 1e-9):
        return f"({points[-1][1]:.3g} at {xs[-1]:.2g})"
    if x < xs[0]:
        return "-"
    return f"{np.exp(np.interp(np.log(x), np.log(xs), np.log([p[1] for p in points]))):.3g}"


def _num(value, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


def tables(directories: list[str]) -> str:
    rows, curves = [], {}
    for directory in directories:
        found, their_curves = collect(Path(directory))
        rows += [{**r, "run": f"{directory}/{r['run']}"} for r in found]
        curves.update({f"{directory}/{k}": v for k, v in their_curves.items()})
    groups = pool(rows)
    by_nodes, by_cpu = node_curves(rows, curves), node_curves(rows, curves, "cpu_seconds")
    out = []
    for game in sorted({g["game"] for g in groups}):
        out += [f"\n### {game}\n", "| method | size (%) | nodes touched | CPU seconds | exploitability | 95% CI | "
                "peak MiB | private MiB | seeds |", "|---|---|---|---|---|---|---|---|---|"]
        mine = sorted((g for g in groups if g["game"] == game),
                      key=lambda g: (g["label"], g["representation_pct"] or 0.0))
        for g in mine:
            out.append(f"| {g['label']} | {_num(g['representation_pct'])} | {_num(g['nodes_touched'])} | "
                       f"{_num(g['cpu_seconds'])} | {_num(g['exploitability'], 4)} | "
                       f"±{_num(g['exploitability_ci95'], 2)} | {_num(g['peak_rss_mib'], 4)} | "
                       f"{_num(g['anon_rss_mib'], 4)} | {g['seeds']} |")
        targets = [(label, points) for (gm, label), points in by_nodes.items()
                   if gm == game and label.startswith("RCFR") and "table" not in label]
        if not targets:
            continue
        names = sorted(label for gm, label in by_nodes if gm == game)
        out += ["", "Read off the curves (mean over seeds) at the RCFR arms' node budget and at each one's final CPU "
                "seconds:", "", "| at | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
        budgets = sorted({float(f"{points[-1][0]:.2g}") for _, points in targets})
        for nodes in budgets:  # the RCFR arms share a node budget: one row for it
            out.append(f"| {nodes:.3g} nodes | " + " | ".join(_at(by_nodes[(game, n)], nodes) for n in names) + " |")
        for label, _ in targets:
            seconds = by_cpu[(game, label)][-1][0]
            out.append(f"| {label}: {seconds:.3g} CPU s | " + " | ".join(
                _at(by_cpu[(game, n)], seconds) for n in names) + " |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(tables(sys.argv[1:]))
