"""Lanctot 2013, Fig 7.5 from a `lanctot_fig75` (or `_quick`) sweep: a table at fixed node counts and a
two-panel figure (exploitability against nodes touched; each variant relative to plain chance sampling).

    python -m benchmarks.reproductions.lanctot_fig75 outputs/lanctot_fig75_quick/<time> --figure docs/figures/fig7_5_quick.png

The kit's own aggregate draws the left panel too; the right one makes differences of a few percent
legible. Per node count: mean exploitability over seeds (log-log interpolation of each seed's evaluations)
with a 95% CI, the ratio to `CS single`, and a Welch t-test on log exploitability against `CS single`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from scipy import stats

from rcfr.experiments.runs import collect  # noqa: E402
from rcfr.files import atomic_write  # noqa: E402

BASE = "CS single"
ORDER = ("CS single", "CS paired", "CS common")


def seed_curves(directory: Path) -> dict[str, list[tuple[np.ndarray, np.ndarray]]]:
    """label -> per seed: (log nodes touched, log exploitability) at its evaluations."""
    rows, curves = collect(directory)
    out: dict[str, list] = {}
    for r in rows:
        points = [c for c in curves.get(r["run"], []) if c.get("nodes_touched") is not None]
        if points:
            out.setdefault(r["label"], []).append((np.log([c["nodes_touched"] for c in points]),
                                                   np.log([c["exploitability"] for c in points])))
    return {label: out[label] for label in ORDER if label in out}


def at(curves, log_nodes: float) -> np.ndarray:
    """Each seed's exploitability at `log_nodes` (log-log interpolation)."""
    return np.exp([np.interp(log_nodes, x, y) for x, y in curves])


def ci(values: np.ndarray) -> float:
    return float(stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values)))


def table(curves: dict, points: list[float]) -> str:
    lines = ["| nodes touched | " + " | ".join(curves) + " |", "|---|" + "---|" * len(curves)]
    for nodes in points:
        base = at(curves[BASE], np.log(nodes))
        cells = []
        for label, group in curves.items():
            values = at(group, np.log(nodes))
            cell = f"{values.mean():.4f} ± {ci(values):.4f}"
            if label != BASE:
                p = stats.ttest_ind(np.log(values), np.log(base), equal_var=False).pvalue
                cell += f" ({values.mean() / base.mean():.3f}x, p = {p:.2g})"
            cells.append(cell)
        lines.append(f"| {nodes:.0e} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def figure(curves: dict, path: Path, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    low = max(max(x[0] for x, _ in group) for group in curves.values())
    high = min(min(x[-1] for x, _ in group) for group in curves.values())
    grid = np.linspace(low, high, 60)
    base = np.array([at(curves[BASE], g).mean() for g in grid])
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for (label, group), color, marker in zip(curves.items(), ("tab:green", "tab:orange", "tab:blue"), "os^"):
        values = [at(group, g) for g in grid]
        mean = np.array([v.mean() for v in values])
        half = np.array([ci(v) for v in values])
        nodes = np.exp(grid)
        n = len(group)
        left.plot(nodes, mean, color=color, label=f"{label} (n={n})")
        left.fill_between(nodes, mean - half, mean + half, color=color, alpha=0.25)
        right.plot(nodes, mean / base, color=color, marker=marker, markevery=6, label=label)
        right.fill_between(nodes, (mean - half) / base, (mean + half) / base, color=color, alpha=0.2)
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_xlabel("nodes touched")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    left.set_yscale("log")
    left.set_ylabel("exploitability (chips; the thesis's epsilon is 2x)")
    right.set_ylabel(f"mean exploitability / mean of {BASE}")
    right.axhline(1.0, color="gray", lw=0.8)
    left.set_title(title, fontsize=9)
    right.set_title(f"relative to {BASE} (bands: 95% CI of each variant)", fontsize=9)
    fig.tight_layout()
    atomic_write(path, lambda f: fig.savefig(f, format="png", dpi=110))
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--figure", type=Path)
    parser.add_argument("--title", default="Bluff(1,1), chance-sampled CFR (alternating), mean and 95% CI")
    args = parser.parse_args()
    curves = seed_curves(args.directory)
    high = min(min(x[-1] for x, _ in group) for group in curves.values())
    points = [p for p in (1e5, 1e6, 1e7, 1e8) if np.log(p) < high - 0.05] + [float(np.exp(high))]
    print(table(curves, points))
    if args.figure:
        figure(curves, args.figure, args.title)
        print(f"\nfigure: {args.figure}")


if __name__ == "__main__":
    main()
