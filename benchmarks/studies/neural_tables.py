"""Tables and plots of a `neural_leduc` multirun, finished or not (issue 22; docs/neural.md).

`rcfr-aggregate DIR` needs finished runs; this reads every run's metrics.csv as it
stands, so a run stopped by a deadline still shows its curve. For each label: the exploitability at the
last node count that every seed of the label reached (mean and 95% Student-t half-width over seeds;
each seed's curve interpolated log-linearly in nodes), and the CPU seconds there. Plots: exploitability
against nodes touched and against CPU seconds, one line per seed, log-log.

    python -m benchmarks.studies.neural_tables outputs/neural_leduc_main --png docs/figures/neural_leduc
"""

from __future__ import annotations

import argparse
import csv
from collections import defaultdict
from pathlib import Path

import numpy as np
from omegaconf import OmegaConf

from rcfr.stats import ci95


def load(directory: Path) -> dict[str, list[dict[str, np.ndarray]]]:
    runs = defaultdict(list)
    for metrics in sorted(directory.glob("*/metrics.csv")):
        config = OmegaConf.load(metrics.parent / "config.yaml")
        with open(metrics) as handle:
            rows = list(csv.DictReader(handle))
        if not rows:
            continue
        curve = {k: np.array([float(r[k]) for r in rows]) for k in ("nodes_touched", "cpu_seconds",
                                                                       "exploitability_mbb")}
        curve["seed"] = int(config.run.seed)
        curve["budget"] = int(config.run.max_nodes_touched)
        runs[f"{config.game.name}: {config.label}"].append(curve)
    return runs


def at(curve, key: str, nodes: float) -> float:
    x = np.log(curve["nodes_touched"])
    y = np.log(curve[key]) if key == "exploitability_mbb" else curve[key]
    value = np.interp(np.log(nodes), x, y)
    return float(np.exp(value)) if key == "exploitability_mbb" else float(value)


def _width(half: float | None) -> str:
    return "-" if half is None else f"{half:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("directory", type=Path)
    parser.add_argument("--png", default=None, help="path prefix of the two plots")
    args = parser.parse_args()
    runs = load(args.directory)
    print("| game: method | seeds | nodes touched (reached by all seeds / budget) | exploitability mbb/g (mean ± 95% CI) | CPU s |")
    print("|---|---|---|---|---|")
    for label, curves in sorted(runs.items()):
        nodes = min(c["nodes_touched"][-1] for c in curves)
        mbb = [at(c, "exploitability_mbb", nodes) for c in curves]
        cpu = [at(c, "cpu_seconds", nodes) for c in curves]
        print(f"| {label} | {len(curves)} | {nodes:.3g} / {curves[0]['budget']:.3g} | {np.mean(mbb):.1f} ± "
              f"{_width(ci95(mbb))} | {np.mean(cpu):.1f} |")
    if args.png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        for key, axis in (("nodes_touched", "nodes touched"), ("cpu_seconds", "solve CPU seconds (process)")):
            games = sorted({label.split(":")[0] for label in runs})
            methods = sorted({label.split(": ", 1)[1] for label in runs})  # one colour per method in every panel
            fig, axes = plt.subplots(1, len(games), figsize=(6.5 * len(games), 4.8), squeeze=False)
            for ax, game in zip(axes[0], games):
                for label, curves in sorted(runs.items()):
                    if not label.startswith(game + ":"):
                        continue
                    method = label.split(": ", 1)[1]
                    k = methods.index(method)
                    colour = plt.cm.tab10(k) if len(methods) <= 10 else plt.cm.tab20(k % 20)
                    for j, c in enumerate(curves):
                        keep = c[key] > 0
                        ax.plot(c[key][keep], c["exploitability_mbb"][keep], color=colour, alpha=0.8, lw=1.2,
                                marker="o", ms=3, label=method if j == 0 else None)
                if game == "leduc":
                    ax.axhline(60, color="grey", ls=":", lw=1)
                ax.set(xscale="log", yscale="log", xlabel=axis, ylabel="exploitability (mbb/g)", title=game)
                ax.grid(True, which="both", alpha=0.3)
                ax.legend(fontsize=8)
            goal = "; dotted: 60 mbb/g (issue 22's goal on Leduc)" if "leduc" in games else ""
            fig.suptitle(f"one line per seed{goal}", fontsize=9)
            fig.tight_layout()
            fig.savefig(f"{args.png}_{key}.png", dpi=110)
            plt.close(fig)


if __name__ == "__main__":
    main()
