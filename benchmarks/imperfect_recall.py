"""Lanctot 2013, ch. 5: CFR on imperfect-recall abstractions of the dice games, scored in the full game.

    python benchmarks/imperfect_recall.py [--quick] [--write]

* Fig 5.3: vanilla CFR (full width, `abstract_solver("cfr", ...)`) on DRP-IR and Bluff(1,1) r = 4;
  exploitability in the full game of the full average and of the abstract average vs iterations.
* Fig 5.4: chance-sampled CFR (`cscfr`, simultaneous updates, full averaging) on Skew-DRP-IR(δ) and on
  Bluff(1,1) remembering the last r bids; the sum of both players' average positive regrets in the
  full game, (R_1^{T,+} + R_2^{T,+}) / T, computed exactly (`FullRegret`).

Prints Markdown tables, saves the PNGs in docs/figures/; ``--write`` also replaces the results block
of docs/mccfr.md (atomically). ``--quick`` (under a minute) runs fewer iterations.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

import rcfr  # noqa: E402
from rcfr.abstraction import FullRegret, abstract_solver, average_policy, make_abstraction  # noqa: E402
from rcfr.files import atomic_write  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DOC, FIGURES = ROOT / "docs" / "mccfr.md", ROOT / "docs" / "figures"
START, END = "<!-- imperfect-recall:start -->", "<!-- imperfect-recall:end -->"


def checkpoints(iterations: int, per_decade: int = 4) -> list[int]:
    marks = np.unique(np.round(np.logspace(0, np.log10(iterations), 1 + per_decade * int(np.log10(iterations)))))
    return [int(m) for m in marks if m <= iterations] + ([iterations] if marks[-1] < iterations else [])


def fig53(iterations: int) -> dict[str, dict[str, list]]:
    """{game label: {"iterations": [...], "full": [...], "abstract": [...]}} (exploitability, chips)."""
    out = {}
    for label, game, name, options in [("DRP-IR", rcfr.load_game("dieroll"), "drp_ir", {}),
                                       ("Bluff(1,1) r=4", rcfr.load_game("liars_dice"), "bluff_last_bids", {"r": 4})]:
        solver = abstract_solver("cfr", game, make_abstraction(game, name, **options))
        curve = {"iterations": [], "full": [], "abstract": []}
        for mark in checkpoints(iterations):
            solver.run(mark - solver.iteration)
            curve["iterations"].append(mark)
            for space in ("full", "abstract"):
                curve[space].append(rcfr.exploitability(game, average_policy(solver, space)))
        out[label] = curve
    return out


def _regret_curve(game, abstraction, iterations: int, seed: int) -> tuple[list, list]:
    solver = rcfr.make_solver("cscfr", game, abstraction=abstraction, seed=seed)
    tracker, marks, values = FullRegret(game), set(checkpoints(iterations)), []
    for t in range(1, iterations + 1):
        tracker.add(solver.current_policy())  # σ^t, before iteration t updates the regrets
        solver.run(1)
        if t in marks:
            values.append(tracker.positive_sum())
    return sorted(marks), values


def fig54(iterations: int, bluff_iterations: int, seeds: int, bids=(1, 2, 3, 4, 6, 12)) -> dict[str, dict[str, list]]:
    """{curve label: {"iterations": [...], "mean": [...], "half_width": [...]}} over `seeds` runs."""
    runs = []
    for delta in (0.0, 0.05, 0.1, 0.2, 0.5):
        game = rcfr.load_game("dieroll", skew=delta) if delta else rcfr.load_game("dieroll")
        runs.append((f"Skew-DRP-IR({delta:g})", game, make_abstraction(game, "drp_ir"), iterations))
    bluff = rcfr.load_game("liars_dice")
    for r in bids:
        label = "Bluff(1,1) full game" if r == 12 else f"Bluff(1,1) r={r}"
        runs.append((label, bluff, make_abstraction(bluff, "bluff_last_bids", r=r), bluff_iterations))
    out = {}
    for label, game, abstraction, n in runs:
        curves = [_regret_curve(game, abstraction, n, seed) for seed in range(seeds)]
        values = np.array([c[1] for c in curves])
        half = (stats.t.ppf(0.975, seeds - 1) * values.std(axis=0, ddof=1) / np.sqrt(seeds) if seeds > 1
                else np.zeros(values.shape[1]))  # 95% CI (Student t)
        out[label] = {"iterations": curves[0][0], "mean": values.mean(axis=0).tolist(), "half_width": half.tolist()}
    return out


def _table(curves: dict, columns: list[str], fmt: str) -> str:
    marks = next(iter(curves.values()))["iterations"]
    rows = ["| curve | " + " | ".join(f"T = {m:,}" for m in marks) + " |", "|---" * (len(marks) + 1) + "|"]
    for label, c in curves.items():
        for col in columns:
            name = label if len(columns) == 1 else f"{label}, {col}"
            rows.append(f"| {name} | " + " | ".join(format(v, fmt) for v in c[col]) + " |")
    return "\n".join(rows)


def _plot(path: Path, panels: list[tuple[str, dict, list[str], bool]]) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4))
    for ax, (title, curves, columns, band) in zip(np.atleast_1d(axes), panels):
        for label, c in curves.items():
            for col in columns:
                y = np.array(c[col])
                line, = ax.plot(c["iterations"], y, label=label if len(columns) == 1 else f"{label}, {col}",
                                linestyle="--" if col == "abstract" else "-")
                if band:
                    h = np.array(c["half_width"])
                    ax.fill_between(c["iterations"], y - h, y + h, color=line.get_color(), alpha=0.2)
        ax.set(xscale="log", yscale="log", xlabel="iterations", title=title)
        ax.legend(fontsize=7)
    FIGURES.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=110)
    tmp.replace(path)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer iterations (under a minute)")
    parser.add_argument("--seeds", type=int, default=None, help="chance-sampling seeds for Fig 5.4")
    parser.add_argument("--write", action="store_true", help="replace the results block of docs/mccfr.md")
    args = parser.parse_args()
    n53, n54, n54_bluff, seeds = (100, 1000, 200, 2) if args.quick else (1000, 50000, 1000, 3)
    bids = (1, 2, 4, 12) if args.quick else (1, 2, 3, 4, 6, 12)
    seeds = args.seeds or seeds

    start = time.perf_counter()
    a = fig53(n53)
    t53 = time.perf_counter() - start
    b = fig54(n54, n54_bluff, seeds, bids)
    t54 = time.perf_counter() - start - t53
    drp = {k: v for k, v in b.items() if k.startswith("Skew")}
    bluff = {k: v for k, v in b.items() if k.startswith("Bluff")}
    suffix = "_quick" if args.quick else ""
    _plot(FIGURES / f"fig5_3{suffix}.png", [(f"Fig 5.3: {k} (exploitability, chips)", {k: v}, ["full", "abstract"], False)
                                            for k, v in a.items()])
    _plot(FIGURES / f"fig5_4{suffix}.png", [("Fig 5.4: Skew-DRP-IR(δ), (R1+ + R2+)/T", drp, ["mean"], True),
                                            ("Fig 5.4: Bluff(1,1), last r bids, (R1+ + R2+)/T", bluff, ["mean"], True)])
    abs_diff = {k: max(abs(x - y) for x, y in zip(v["full"], v["abstract"])) for k, v in a.items()}
    text = "\n\n".join([
        f"Command: `python benchmarks/imperfect_recall.py{' --quick' if args.quick else ''} --write` "
        f"({t53:.0f} s for Fig 5.3, {t54:.0f} s for Fig 5.4, 2 shared cores under load).",
        "**Fig 5.3** (vanilla CFR, exploitability in the full game, chips; full vs abstract average):",
        _table(a, ["full", "abstract"], ".5f"),
        "Largest |full - abstract| over the checkpoints: " + "; ".join(f"{k}: {v:.2e}" for k, v in abs_diff.items()) + ".",
        f"![Fig 5.3](figures/fig5_3{suffix}.png)",
        f"**Fig 5.4** (chance-sampled CFR, (R_1^{{T,+}} + R_2^{{T,+}})/T in the full game, mean of {seeds} seeds; "
        f"95% CI half-widths in the PNG):",
        _table(drp, ["mean"], ".4f"), _table(bluff, ["mean"], ".4f"),
        f"![Fig 5.4](figures/fig5_4{suffix}.png)"])
    print(text)
    if args.write:
        doc = DOC.read_text()
        block = f"{START}\n{text}\n{END}"
        pattern = re.compile(re.escape(START) + ".*?" + re.escape(END), re.S)
        if not pattern.search(doc):
            raise SystemExit(f"{DOC} has no {START} ... {END} block")
        new = pattern.sub(lambda _: block, doc)
        atomic_write(DOC, lambda f: f.write(new.encode()))


if __name__ == "__main__":
    main()
