"""Kuchar 2020, Tables 5.1-5.3: our MCCFRb runs (the `kuchar_tables` preset) beside the thesis's numbers.

    python benchmarks/kuchar_tables.py outputs/kuchar_tables/<time>            # print the tables
    python benchmarks/kuchar_tables.py outputs/kuchar_tables/<time> --write    # and put them in docs/mccfr.md

Reads every run directory of a sweep (its ``config.yaml`` and ``metrics.csv``; unfinished runs count up
to their last evaluation) and prints, per game and iteration 10^k, the mean ± standard deviation over
games/seeds of the exploitability in the thesis's unit: GTlib2 divides (BR_0 + BR_1) / 2 by the
domain's maximal utility, which is our exploitability (chips or points) over `SCALE` (see docs/mccfr.md).
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
from omegaconf import OmegaConf

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from rcfr.files import atomic_write  # noqa: E402

DOC = ROOT / "docs" / "mccfr.md"
START, END = "<!-- kuchar-tables:start -->", "<!-- kuchar-tables:end -->"
ITERATIONS = [10 ** k for k in range(7)]
VARIANTS = [("MCCFRb DA", "DA"), ("MCCFRb EDA", "EDA"), ("MCCFRb NU", "NU"), ("VR-MCCFR", None)]
# GTlib2's maximal utility: Goofspiel(N) with point differences: the sum of the point cards minus twice the
# smallest; Leduc: 19, the value that puts uniform play (2.3736 chips) at the thesis's 0.125 after one iteration
SCALE = {"Goofspiel(4)": 8.0, "Goofspiel(5)": 13.0, "Leduc": 19.0}
# the thesis's Tables 5.1-5.3: (mean, std) at 10^0 .. 10^6 iterations
THESIS = {
    ("Goofspiel(4)", "DA"): [(0.34, 0.06), (0.35, 0.07), (0.28, 0.07), (0.07, 0.02), (0.011, 0.004), (0.0013, 0.0004),
                             (0.00018, 0.00007)],
    ("Goofspiel(4)", "EDA"): [(0.34, 0.06), (0.32, 0.07), (0.30, 0.05), (0.22, 0.03), (0.20, 0.02), (0.24, 0.03),
                              (0.25, 0.04)],
    ("Goofspiel(4)", "NU"): [(0.34, 0.06), (0.30, 0.07), (0.17, 0.07), (0.06, 0.02), (0.012, 0.004), (0.0020, 0.0006),
                             (0.00022, 0.00011)],
    ("Goofspiel(5)", "DA"): [(0.35, 0.05), (0.34, 0.03), (0.36, 0.05), (0.22, 0.05), (0.08, 0.02), (0.02, 0.01),
                             (0.006, 0.002)],
    ("Goofspiel(5)", "NU"): [(0.35, 0.05), (0.35, 0.05), (0.28, 0.05), (0.16, 0.02), (0.07, 0.01), (0.026, 0.004),
                             (0.008, 0.001)],
    ("Leduc", "DA"): [(0.125, 0.002), (0.13, 0.01), (0.14, 0.01), (0.16, 0.01), (0.13, 0.02), (0.046, 0.006),
                      (0.009, 0.002)],
    ("Leduc", "NU"): [(0.125, 0.002), (0.134, 0.007), (0.14, 0.01), (0.16, 0.02), (0.08, 0.01), (0.030, 0.004),
                      (0.008, 0.002)],
}


def game_title(game) -> str:
    if game.name == "goofspiel":
        return f"Goofspiel({game.params.cards})"
    return "Leduc" if game.name == "leduc" else str(game.name)


def collect(sweep: Path) -> dict:
    """{(game, label): {iteration: [exploitability of each run]}} over the run directories under `sweep`."""
    values: dict = defaultdict(lambda: defaultdict(list))
    for config_path in sorted(sweep.glob("**/config.yaml")):
        metrics = config_path.parent / "metrics.csv"
        if not metrics.exists() or config_path.parent.name == ".hydra":
            continue
        config = OmegaConf.load(config_path)
        with open(metrics) as f:
            for row in csv.DictReader(f):
                values[(game_title(config.game), config.label)][int(row["iteration"])].append(
                    float(row["exploitability"]))
    return values


def cell(runs: list[float], scale: float) -> str:
    if not runs:
        return "-"
    x = np.asarray(runs) / scale
    return f"{x.mean():.3g} ± {x.std(ddof=1) if len(x) > 1 else 0.0:.2g}"


def tables(values: dict) -> str:
    out = []
    for game in SCALE:
        if not any(g == game for g, _ in values):
            continue
        shown = [(label, key) for label, key in VARIANTS if (game, label) in values]
        runs = {label: max(len(v) for v in values[(game, label)].values()) for label, _ in shown}
        header = ["iterations"]
        for label, key in shown:
            header.append(f"{label} (ours, n={runs[label]})")
            if (game, key) in THESIS:
                header.append(f"{key} (thesis)")
        out += [f"**{game}** (exploitability / {SCALE[game]:g}; mean ± std over games/seeds)", "",
                "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for i, t in enumerate(ITERATIONS):
            row = [f"10^{i}"]
            for label, key in shown:
                row.append(cell(values[(game, label)].get(t, []), SCALE[game]))
                if (game, key) in THESIS:
                    mean, std = THESIS[(game, key)][i]
                    row.append(f"{mean:g} ± {std:g}")
            out.append("| " + " | ".join(row) + " |")
        out.append("")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sweep", type=Path, help="a sweep directory of the kuchar_tables preset")
    parser.add_argument("--write", action="store_true", help="replace the results block of docs/mccfr.md")
    args = parser.parse_args()
    text = tables(collect(args.sweep))
    print(text)
    if args.write:
        doc = DOC.read_text()
        head, rest = doc.split(START)
        _, tail = rest.split(END)
        new = f"{head}{START}\n{text}\n{END}{tail}"
        atomic_write(DOC, lambda f: f.write(new.encode()))


if __name__ == "__main__":
    main()
