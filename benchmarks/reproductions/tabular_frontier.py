"""The tabular frontier suite (issue 21): every full-width tabular solver on the DDCFR benchmark games
(OpenSpiel definitions, through the `openspiel:` bridge) plus Liar's Dice 1x5, 1x6 and Goofspiel-5.

    python -m benchmarks.reproductions.tabular_frontier table  [--games quick] [--solvers a;b] [DIR]   # T = 1,000 table
    python -m benchmarks.reproductions.tabular_frontier report DIR|CSV [...]                  # table.csv files as one table
    python -m benchmarks.reproductions.tabular_frontier variants --ranks 5,9 --iterations 5000 --solvers "dcfr;apdcfr+"
    python -m benchmarks.reproductions.tabular_frontier curves [--games quick] [--iterations 20000] [--out DIR]
    python -m benchmarks.reproductions.tabular_frontier plot DIR                              # curves.csv -> PNG
    python -m benchmarks.reproductions.tabular_frontier sizes                                 # ours vs a pyspiel walk

`table` runs each solver to exactly 1,000 iterations (the schedules' horizon, and ddcfr's, is 1,000) and prints our
exploitability beside the published numbers; `curves` evaluates at log-spaced iterations up to
`--iterations` (schedules planned over that horizon) and appends to DIR/curves.csv as it goes, so a
partial run keeps what it measured. Every solver is deterministic: one run per cell, no seeds.
"""

from __future__ import annotations

import argparse
import csv
import math
import time
from pathlib import Path

import numpy as np

import rcfr
from rcfr.solvers import make_solver

BATTLESHIP = "battleship(board_width={w},board_height={h},ship_sizes=[2],ship_values=[2],num_shots=3," \
             "allow_repeated_shots=False)"
#: label -> OpenSpiel game string, as in the DDCFR authors' game configs (Goofspiel is turned turn-based)
GAMES = {
    "Kuhn": "kuhn_poker",
    "Leduc": "leduc_poker",
    "Goofspiel-3": "goofspiel(num_cards=3,imp_info=True,points_order=descending)",
    "Goofspiel-4": "goofspiel(num_cards=4,imp_info=True,points_order=descending)",
    "Liar's Dice 1x3": "liars_dice(numdice=1,dice_sides=3)",
    "Liar's Dice 1x4": "liars_dice(numdice=1,dice_sides=4)",
    "Battleship 2x2": BATTLESHIP.format(w=2, h=2),
    "Battleship 2x3": BATTLESHIP.format(w=2, h=3),
    "Liar's Dice 1x5": "liars_dice(numdice=1,dice_sides=5)",
    "Liar's Dice 1x6": "liars_dice(numdice=1,dice_sides=6)",
    "Goofspiel-5": "goofspiel(num_cards=5,imp_info=True,points_order=descending)",
}
QUICK = ["Kuhn", "Leduc", "Goofspiel-3", "Liar's Dice 1x3", "Battleship 2x2"]
SOLVERS = ["cfr", "cfr+", "lcfr", "dcfr", "dcfr+", "pcfr+", "pdcfr+", "hs-dcfr", "hs-pcfr+", "sapcfr+", "apcfr+",
           "apdcfr+", "ddcfr"]
SCHEDULED = ("hs-dcfr", "hs-pcfr+", "ddcfr")  # planned over a horizon (ddcfr's policy observes t / T)

#: Published exploitability at T = 1,000 (chips): the DDCFR authors' repository results (Xu et al.,
#: ICLR 2024), as quoted in issue 21 and docs/../REFERENCE.md. None: not published. "<=1e-12": their
#: evaluation floors exploitability at 1e-12.
PUBLISHED = {  # game: (CFR+, DCFR, DCFR+, DDCFR)
    "Kuhn": (8.7e-5, 1.5e-4, 1.1e-4, 4.0e-5),
    "Leduc": (2.6e-4, 1.5e-4, 1.5e-4, 1.2e-4),
    "Goofspiel-3": (1.8e-6, 3.5e-9, 1e-12, 1e-12),
    "Goofspiel-4": (2.7e-4, 4.1e-4, 7.7e-5, 3.8e-5),
    "Liar's Dice 1x3": (4.8e-6, 4.0e-8, 2.5e-12, 1e-12),
    "Liar's Dice 1x4": (4.5e-5, 2.6e-5, None, 1.7e-5),
    "Battleship 2x2": (2.6e-3, 2.1e-3, None, 1.4e-3),
    "Battleship 2x3": (1.75e-3, 1.6e-3, None, 7.6e-4),
}
FLOOR = 1e-12  # the published evaluation's floor; ours is reported as measured


def load(label: str):
    return rcfr.load_game("openspiel:" + GAMES[label])


def build(name: str, game, horizon: int):
    return make_solver(name, game, horizon=horizon) if name in SCHEDULED else make_solver(name, game)


def run_table(games: list[str], out: Path, solvers: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for label in games:
        game = load(label)
        for name in solvers:
            start = time.perf_counter()
            solver = build(name, game, 1000).run(1000)
            value = rcfr.exploitability(game, solver.average_policy())
            rows.append({"game": label, "solver": name, "iterations": 1000, "exploitability": value,
                         "seconds": time.perf_counter() - start,
                         "evaluations": getattr(solver, "evaluations", 0)})  # ddcfr's observations
            print(f"{label:16s} {name:9s} {value:.3e}  {rows[-1]['seconds']:.1f}s", flush=True)
    _write(out / "table.csv", rows)
    report(rows)


def report(rows: list[dict]) -> None:
    print(markdown_table(rows))
    print()
    print(rule_summary(rows))


def markdown_table(rows: list[dict]) -> str:
    values = {(r["game"], r["solver"]): float(r["exploitability"]) for r in rows}
    games = list(dict.fromkeys(r["game"] for r in rows))
    solvers = [n for n in SOLVERS if any(r["solver"] == n for r in rows)]
    head = ["game"] + solvers + ["best published (DDCFR)", "best of ours", "goal met by"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for game in games:
        cells = [game]
        for name in solvers:
            cells.append(_fmt(values.get((game, name))))
        published = PUBLISHED.get(game)
        best = published[3] if published else None
        cells.append(("≤ 1e-12" if best == FLOOR else _fmt(best)) if best is not None else "—")
        ours = {n: values[(game, n)] for n in SOLVERS if (game, n) in values}
        winner = min(ours, key=ours.get)
        cells.append(f"{_fmt(ours[winner])} ({winner})")
        if best is None:
            cells.append("(no published number)")
        else:
            met = [n for n in SOLVERS if (game, n) in values and max(values[(game, n)], FLOOR) <= best]
            cells.append(", ".join(met) if met else f"none (gap x{ours[winner] / best:.2g})")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def rule_summary(rows: list[dict]) -> str:
    """The goal as one rule with one setting across the suite: per solver, the games of the published
    table where it is at or below the best published number, and its gap on the others."""
    values = {(r["game"], r["solver"]): float(r["exploitability"]) for r in rows}
    games = [g for g in dict.fromkeys(r["game"] for r in rows) if g in PUBLISHED]
    lines = ["| solver | at or below DDCFR on | above it on (ours / published) |", "|---|---|---|"]
    for name in [n for n in SOLVERS if any(r["solver"] == n for r in rows)]:
        met, missed = [], []
        for game in games:
            if (game, name) not in values:
                continue
            ours, best = max(values[(game, name)], FLOOR), PUBLISHED[game][3]
            (met if ours <= best else missed).append(game if ours <= best else f"{game} (x{ours / best:.2g})")
        lines.append(f"| {name} | {len(met)} of {len(met) + len(missed)}: {', '.join(met) or '—'} | "
                     f"{', '.join(missed) or '—'} |")
    return "\n".join(lines)


def _fmt(value) -> str:
    return "" if value is None else f"{value:.2e}"


#: Meng et al. (AAAI 2026), final values on Leduc with 5 / 9 / 13 ranks (REFERENCE.md: probably T = 5,000)
PUBLISHED_VARIANTS = {"dcfr": (2.8e-5, 1.3e-5, 1.1e-5), "pcfr+": (2.7e-5, 5.2e-5, 3.2e-5),
                      "sapcfr+": (3.5e-6, 4.1e-5, 1.4e-5), "apdcfr+": (3.7e-6, 3.4e-6, 3.0e-6)}


def run_variants(ranks: list[int], iterations: list[int], solvers: list[str]) -> None:
    """The asymmetric rules' own benchmark: Leduc with more ranks (rcfr's built-in Leduc, two suits)."""
    print("| ranks | solver | " + " | ".join(f"T = {t:,}" for t in iterations) + " | published (final) |")
    print("|---|---|" + "---|" * (len(iterations) + 1))
    for r in ranks:
        game = rcfr.load_game("leduc", ranks=r)
        for name in solvers:
            solver, cells = make_solver(name, game), []
            for t in iterations:
                solver.run(t - solver.iteration)
                cells.append(f"{rcfr.exploitability(game, solver.average_policy()):.2e}")
            published = PUBLISHED_VARIANTS.get(name)
            mark = f"{published[(5, 9, 13).index(r)]:.1e}" if published and r in (5, 9, 13) else "—"
            print(f"| {r} | {name} | " + " | ".join(cells) + f" | {mark} |", flush=True)


def run_curves(games: list[str], iterations: int, out: Path, points: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    marks = np.unique(np.round(np.geomspace(1, iterations, points)).astype(int)).tolist()
    marks = sorted(set(marks) | {1000} if iterations >= 1000 else set(marks))
    path = out / "curves.csv"
    new = not path.exists()
    with open(path, "a", newline="") as handle:
        writer = csv.DictWriter(handle, ["game", "solver", "horizon", "iterations", "exploitability", "seconds"])
        if new:
            writer.writeheader()
        for label in games:
            game = load(label)
            for name in SOLVERS:
                solver, start = build(name, game, iterations), time.perf_counter()
                for mark in marks:
                    solver.run(mark - solver.iteration)
                    value = rcfr.exploitability(game, solver.average_policy())
                    writer.writerow({"game": label, "solver": name, "horizon": iterations, "iterations": mark,
                                     "exploitability": value, "seconds": time.perf_counter() - start})
                handle.flush()
                print(f"{label:16s} {name:9s} T={iterations}: {value:.3e} ({time.perf_counter() - start:.0f}s)",
                      flush=True)


def plot(out: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(out / "curves.csv") as handle:
        rows = list(csv.DictReader(handle))
    games = list(dict.fromkeys(r["game"] for r in rows))
    cols = 4
    fig, axes = plt.subplots(math.ceil(len(games) / cols), cols, figsize=(4.2 * cols, 3.4 * math.ceil(len(games) / cols)),
                             squeeze=False)
    # distinct colour, dash and marker per solver: curves that coincide (CFR+ and Linear CFR on
    # Goofspiel-3) stay visible as overlapping markers
    styles = {n: dict(color=f"C{i}", linestyle="-" if i < 5 else "--" if i < 9 else ":", marker="osv^DXP*h<>p"[i], markevery=(i % 3, 4),
                      markersize=4, markerfacecolor="none") for i, n in enumerate(SOLVERS)}
    for ax, game in zip(axes.flat, games):
        for name in SOLVERS:
            points = [(int(r["iterations"]), float(r["exploitability"])) for r in rows
                      if r["game"] == game and r["solver"] == name]
            if points:
                x, y = zip(*points)
                ax.loglog(x, np.maximum(y, 1e-17), label=name, linewidth=1.2, **styles[name])
        published = PUBLISHED.get(game)
        if published:
            ax.scatter([1000], [published[3]], marker="*", s=110, color="black", zorder=5,
                       label="DDCFR at T=1,000 (published; at 1e-12: <= 1e-12)")
        ax.set_title(game, fontsize=10)
        ax.set_xlabel("iterations")
        ax.set_ylabel("exploitability (chips)")
        ax.grid(True, which="major", alpha=0.3)
    spare = list(axes.flat)[len(games):]
    for ax in spare:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    if spare:  # in an empty panel, clear of every curve
        spare[0].legend(handles, labels, loc="center", ncol=1, fontsize=9)
    else:
        fig.legend(handles, labels, loc="lower center", ncol=5, fontsize=9, bbox_to_anchor=(0.5, -0.06))
    fig.suptitle("Exploitability of the average policy (values below 1e-17 drawn at 1e-17)", fontsize=11)
    fig.tight_layout()
    fig.savefig(out / "curves.png", dpi=110)
    print(out / "curves.png")


def sizes() -> None:
    """Histories and information sets: rcfr's compiled game (forced moves collapsed) beside a direct
    pyspiel walk (every non-terminal decision state's information state string)."""
    import pyspiel

    print("| game | rcfr histories | rcfr information sets | OpenSpiel decision information sets | "
          "OpenSpiel ones with 2+ actions |")
    print("|---|---|---|---|---|")
    for label, name in GAMES.items():
        game = load(label)
        spiel = pyspiel.load_game(name)
        if spiel.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
            spiel = pyspiel.convert_to_turn_based(spiel)
        keys, wide = set(), set()
        stack = [spiel.new_initial_state()]
        while stack:
            state = stack.pop()
            if state.is_terminal():
                continue
            if not state.is_chance_node():
                key = (state.current_player(), state.information_state_string())
                keys.add(key)
                if len(state.legal_actions()) > 1:
                    wide.add(key)
            stack.extend(state.child(a) for a in state.legal_actions())
        print(f"| {label} | {game.num_histories:,} | {game.num_infosets:,} | {len(keys):,} | {len(wide):,} |", flush=True)


def _write(path: Path, rows: list[dict]) -> None:
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["table", "report", "variants", "curves", "plot", "sizes"])
    parser.add_argument("--ranks", default="5", help="Leduc ranks for 'variants', separated by ','")
    parser.add_argument("out", nargs="*", default=["outputs/tabular_frontier"])
    parser.add_argument("--solvers", default="all", help="'all' or solver names separated by ';'")
    parser.add_argument("--games", default="all", help="'all', 'quick', or labels separated by ';'")
    parser.add_argument("--iterations", type=int, default=20000)
    parser.add_argument("--points", type=int, default=30)
    args = parser.parse_args()
    games = list(GAMES) if args.games == "all" else QUICK if args.games == "quick" else args.games.split(";")
    unknown = [g for g in games if g not in GAMES]
    if unknown:
        parser.error(f"unknown games {unknown}; allowed: {list(GAMES)}")
    solvers = SOLVERS if args.solvers == "all" else args.solvers.split(";")
    if set(solvers) - set(SOLVERS):
        parser.error(f"unknown solvers {sorted(set(solvers) - set(SOLVERS))}; allowed: {SOLVERS}")
    out = Path(args.out[0])
    if args.command == "table":
        run_table(games, out, solvers)
    elif args.command == "variants":
        run_variants([int(r) for r in args.ranks.split(",")], [1000, args.iterations], solvers)
    elif args.command == "report":
        rows = []
        for path in map(Path, args.out):  # a table.csv or the folder holding one
            with open(path if path.is_file() else path / "table.csv") as handle:
                rows += list(csv.DictReader(handle))
        report(rows)
    elif args.command == "curves":
        run_curves(games, args.iterations, out, args.points)
    elif args.command == "plot":
        plot(out)
    else:
        sizes()


if __name__ == "__main__":
    main()
