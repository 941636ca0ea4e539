"""Kuchar 2020, Tables 5.1-5.3: our MCCFRb runs beside the thesis's numbers.

    python -m benchmarks.reproductions.kuchar_tables outputs/kuchar_tables/<time>            # tabulate a kit sweep
    nice -n 10 python -m benchmarks.reproductions.kuchar_tables --run outputs/kuchar_one_process   # run it in one process
    python -m benchmarks.reproductions.kuchar_tables outputs/kuchar_one_process outputs/kuchar_descending --write   # into docs/mccfr.md

The runs are the `kuchar_tables` preset's (games, arms, seeds, solver options, evaluation schedule are
read from configs/experiment/kuchar_tables.yaml, configs/game, configs/solver and rcfr.experiments.arms), made
either by the kit (`rcfr-run +experiment=kuchar_tables`: one process, run directory and
checkpoint per run) or by ``--run``, which makes the same runs, with the same seeds and therefore the same
numbers, in one process without the per-run start-up, writing ``results.json`` after every run and
skipping the runs it already holds (`--iterations` caps the budget; a later, larger budget redoes the
shorter runs). On a 2-core machine shared by many jobs the kit's per-run start-up dominates 240 short runs.

The tables give, per game and iteration 10^k, the mean ± standard deviation over games/seeds of the
exploitability in the thesis's unit: GTlib2 divides (BR_0 + BR_1) / 2 by the domain's maximal utility,
which is our exploitability (chips or points) over `scale(game)` (see docs/mccfr.md).
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from omegaconf import OmegaConf

import rcfr  # noqa: E402
from benchmarks import ROOT
from rcfr.experiments.arms import arms  # noqa: E402
from rcfr.experiments.runner import eval_schedule  # noqa: E402
from rcfr.files import atomic_write, write_json  # noqa: E402

CONFIGS = ROOT / "configs"

DOC = ROOT / "docs" / "mccfr.md"
START, END = "<!-- kuchar-tables:start -->", "<!-- kuchar-tables:end -->"
ITERATIONS = [10 ** k for k in range(7)]
VARIANTS = [("MCCFRb DA", "DA"), ("MCCFRb EDA", "EDA"), ("MCCFRb NU", "NU"), ("VR-MCCFR", None)]
GAMES = ("Goofspiel(4)", "Goofspiel(5)", "Leduc")  # the thesis's tables, in its order
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
    """The thesis's name of a game config; a Goofspiel point order other than a drawn one is named."""
    if game.name == "goofspiel":
        order = game.params.get("points_order", "descending")
        return f"Goofspiel({game.params.cards})" + ("" if order == "random" else f", {order} points")
    return "Leduc" if game.name == "leduc" else str(game.name)


def scale(title: str) -> float:
    """GTlib2's maximal utility: Goofspiel(N) with point differences, the sum of the point cards minus
    twice the smallest; Leduc: 19, the value that puts uniform play (2.3736 chips) at the thesis's 0.125
    after one iteration (docs/mccfr.md)."""
    if title.startswith("Goofspiel("):
        n = int(title[10:title.index(")")])
        return n * (n + 1) / 2 - 2
    return 19.0


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


def load_results(path: Path) -> dict:
    """The same mapping as `collect`, from a ``--run`` results file."""
    values: dict = defaultdict(lambda: defaultdict(list))
    for run in json.loads(path.read_text()).values():
        for iteration, exploitability in run["evals"].items():
            values[(run["game"], run["label"])][int(iteration)].append(exploitability)
    return values


def protocol(preset: str = "kuchar_tables", games: list[str] | None = None, overrides: dict | None = None) -> list[dict]:
    """The preset's runs in its sweep order (only `games`, if given, with game parameters `overrides`
    where a game has them): game config, solver name and options, label, seed, evaluation schedule."""
    config = OmegaConf.load(CONFIGS / "experiment" / f"{preset}.yaml")
    sweep = config.hydra.sweeper.params
    seeds = str(sweep["run.seed"])
    seeds = list(range(*map(int, seeds[6:-1].split(",")))) if seeds.startswith("range(") else [
        int(x) for x in seeds.split(",")]
    table = arms()
    runs = []
    for seed in seeds:
        for game_name in str(sweep.game).split(","):
            if games and game_name not in games:
                continue
            game = OmegaConf.load(CONFIGS / "game" / f"{game_name}.yaml")
            params = {k: seed if v == "${run.seed}" else v
                      for k, v in OmegaConf.to_container(game.params, resolve=False).items()}
            params.update({k: v for k, v in (overrides or {}).items() if k in params})
            for arm_name in str(sweep["+arm"]).split(","):
                arm = table[arm_name]
                solver = arm["defaults"][0]["override /solver"]
                options = dict(OmegaConf.load(CONFIGS / "solver" / f"{solver}.yaml").options)
                options.update(arm.get("solver", {}).get("options", {}))
                options.update(OmegaConf.to_container(config.solver.options))
                runs.append({"game_name": str(game.name), "params": params, "solver": solver, "options": options,
                             "label": arm["label"], "seed": seed,
                             "schedule": eval_schedule(int(config.run.iterations), int(config.run.eval_points))})
    return runs


def run_all(out: Path, iterations: int | None, preset: str = "kuchar_tables", games: list[str] | None = None,
            overrides: dict | None = None) -> None:
    """Make the preset's runs (capped at `iterations`) in this process, saving after each."""
    path = out / "results.json"
    results = json.loads(path.read_text()) if path.exists() else {}
    loaded: dict = {}
    for spec in protocol(preset, games, overrides):
        schedule = [t for t in spec["schedule"] if iterations is None or t <= iterations]
        key = f"{spec['game_name']}{sorted(spec['params'].items())}|{spec['label']}|{spec['seed']}"
        if key in results and max(map(int, results[key]["evals"])) >= schedule[-1]:
            continue
        name = (spec["game_name"], tuple(sorted(spec["params"].items())))
        if name not in loaded:
            loaded.clear()  # one game in memory at a time (the sweep is seed-major)
            loaded[name] = rcfr.load_game(spec["game_name"], **spec["params"])
        game = loaded[name]
        solver = rcfr.make_solver(spec["solver"], game, seed=spec["seed"], **spec["options"])
        evals, start = {}, time.process_time()
        for mark in schedule:
            solver.run(mark - solver.iteration)
            evals[mark] = rcfr.evaluate(game, solver.average_policy()).exploitability
        results[key] = {"game": game_title(OmegaConf.create({"name": spec["game_name"], "params": spec["params"]})),
                        "label": spec["label"], "seed": spec["seed"], "points_order": list(getattr(game.rules, "points", [])),
                        "evals": evals, "cpu_seconds": time.process_time() - start}
        write_json(path, results)
        print(f"{results[key]['game']} {spec['label']} seed {spec['seed']}: {evals[schedule[-1]]:.6g} "
              f"after {schedule[-1]} iterations ({results[key]['cpu_seconds']:.1f} s CPU)", flush=True)


def cell(runs: list[float], scale: float, n: int) -> str:
    """Mean ± std of `runs` over `scale`, saying how many runs when fewer than the column's `n`."""
    if not runs:
        return "-"
    x = np.asarray(runs) / scale
    return f"{x.mean():.3g} ± {x.std(ddof=1) if len(x) > 1 else 0.0:.2g}" + (f" (n={len(x)})" if len(x) < n else "")


def tables(values: dict) -> str:
    out = []
    titles = sorted({g for g, _ in values}, key=lambda g: (GAMES.index(g.split(",")[0]), g))
    for game in titles:
        base = game.split(",")[0]  # the thesis's game
        shown = [(label, key) for label, key in VARIANTS if (game, label) in values]
        runs = {label: max(len(v) for v in values[(game, label)].values()) for label, _ in shown}
        header = ["iterations"]
        for label, key in shown:
            header.append(f"{label} (ours, n={runs[label]})")
            if (base, key) in THESIS:
                header.append(f"{key} (thesis)")
        out += [f"**{game}** (exploitability / {scale(game):g}; mean ± std over games/seeds)", "",
                "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for i, t in enumerate(ITERATIONS):
            row = [f"10^{i}"]
            for label, key in shown:
                row.append(cell(values[(game, label)].get(t, []), scale(game), runs[label]))
                if (base, key) in THESIS:
                    mean, std = THESIS[(base, key)][i]
                    row.append(f"{mean:g} ± {std:g}")
            out.append("| " + " | ".join(row) + " |")
        out.append("")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sweep", type=Path, nargs="+",
                        help="kit sweep directories of the kuchar_tables preset or --run folders (--run: one)")
    parser.add_argument("--run", action="store_true", help="make the preset's runs in this process into SWEEP")
    parser.add_argument("--iterations", type=float, default=None, help="with --run: cap each run's iterations")
    parser.add_argument("--preset", default="kuchar_tables", help="with --run: kuchar_tables or kuchar_tables_quick")
    parser.add_argument("--games", default=None, help="with --run: only these game configs (comma-separated)")
    parser.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                        help="with --run: set a game parameter where a game has it, e.g. points_order=descending")
    parser.add_argument("--write", action="store_true", help="replace the results block of docs/mccfr.md")
    args = parser.parse_args()
    if args.run:
        if len(args.sweep) != 1:
            parser.error("--run writes into one folder")
        overrides = dict(item.split("=", 1) for item in args.override)
        run_all(args.sweep[0], None if args.iterations is None else int(args.iterations), args.preset,
                args.games.split(",") if args.games else None, overrides)
    values: dict = defaultdict(lambda: defaultdict(list))
    for folder in args.sweep:
        results = folder / "results.json"
        for key, runs in (load_results(results) if results.exists() else collect(folder)).items():
            for iteration, found in runs.items():
                values[key][iteration] += found
    text = tables(values)
    print(text)
    if args.write:
        doc = DOC.read_text()
        head, rest = doc.split(START)
        _, tail = rest.split(END)
        new = f"{head}{START}\n{text}\n{END}{tail}"
        atomic_write(DOC, lambda f: f.write(new.encode()))


if __name__ == "__main__":
    main()
