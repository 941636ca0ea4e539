"""RCFR / RCFR+ on Leduc hold'em (rank-only view, 672 sequences) with best-first regression trees.

Prints (and writes as Markdown) three tables:
1. ms per iteration: RCFR+ with a ~300-leaf tree budget (150 per player) next to tabular CFR+;
2. exploitability after N iterations (default 10,000) for BF, BF_BS, BF+, BF+_BS at about 10%,
   25%, 45% and 80% of the game's sequences (tree leaves of both players summed);
3. one LightGBM and one MLP run (RCFR+, poker features).

    python -m benchmarks.reproductions.rcfr_leduc                       # the full version
    python -m benchmarks.reproductions.rcfr_leduc --iterations 2000 --jobs 2 --out docs/rcfr_results.md
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ProcessPoolExecutor

for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import rcfr  # noqa: E402
from rcfr.files import atomic_write  # noqa: E402

VARIANTS = {"BF": ("rcfr", "stored"), "BF_BS": ("rcfr", "bootstrap"),
            "BF+": ("rcfr+", "stored"), "BF+_BS": ("rcfr+", "bootstrap")}
SIZES = (0.10, 0.25, 0.45, 0.80)


def leduc():
    return rcfr.load_game("leduc", merge_suits=True)


def run_config(job: dict) -> dict:
    """One run; returns exploitability at checkpoints, the representation and seconds per iteration."""
    game = leduc()
    solver = rcfr.make_solver(job["solver"], game, **job["options"])
    checkpoints, curve, start = sorted(set(job["checkpoints"])), {}, time.perf_counter()
    for stop in checkpoints:
        solver.run(stop - solver.iteration)
        curve[stop] = rcfr.exploitability(game, solver.average_policy())
    seconds = time.perf_counter() - start
    size = solver.size()
    return {**job, "curve": curve, "size": size, "percent": 100.0 * size / game.num_sequences,
            "ms_per_iteration": 1000.0 * seconds / checkpoints[-1]}


def time_iterations(solver_name: str, iterations: int, **options) -> float:
    game = leduc()
    solver = rcfr.make_solver(solver_name, game, **options)
    solver.run(10)
    start = time.perf_counter()
    solver.run(iterations)
    return 1000.0 * (time.perf_counter() - start) / iterations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=10_000)
    parser.add_argument("--extra-iterations", type=int, default=1_000, help="for the LightGBM and MLP runs")
    parser.add_argument("--timing-iterations", type=int, default=300)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timing-only", action="store_true", help="only the ms-per-iteration table")
    parser.add_argument("--tree", default="best_first", choices=["best_first", "tree"],
                        help="best-first tree for the 16 runs: ours (numba) or scikit-learn's")
    parser.add_argument("--only", default=None, help="comma-separated label prefixes of the runs to do")
    parser.add_argument("--out", default=None, help="also write the tables (Markdown) here")
    args = parser.parse_args()
    game = leduc()
    n = game.num_sequences
    lines = [f"Leduc hold'em, rank-only view: {n} sequences. Iterations: {args.iterations} "
             f"(LightGBM/MLP: {args.extra_iterations}). Trees: {args.tree}. ms / it in the runs table "
             f"includes the exploitability evaluations and {args.jobs} parallel job(s).", ""]

    # 1. speed
    rows = [("RCFR+ tree, 150 leaves per player (300 total)", time_iterations(
                "rcfr+", args.timing_iterations, regressor={"name": "tree", "max_leaves": 150}, features="poker")),
            ("RCFR+ best_first (numba), 150 leaves per player", time_iterations(
                "rcfr+", args.timing_iterations, regressor={"name": "best_first", "max_leaves": 150},
                features="poker")),
            ("CFR+ table", time_iterations("cfr+", args.timing_iterations))]
    lines += ["| solver | ms / iteration |", "|---|---|"] + [f"| {k} | {v:.2f} |" for k, v in rows] + [""]
    print("\n".join(lines[-len(rows) - 3:]), flush=True)
    if args.timing_only:
        return

    # 2. the sixteen tree configurations (+ tabular references), 3. LightGBM and MLP
    marks = [c for c in (100, 1000, args.iterations) if c <= args.iterations]
    jobs = []
    for frac in SIZES:
        leaves = max(2, round(frac * n / 2))
        for name, (solver, targets) in VARIANTS.items():
            jobs.append({"label": name, "target": frac, "solver": solver, "checkpoints": marks,
                         "options": {"regressor": {"name": args.tree, "max_leaves": leaves},
                                     "features": "poker", "targets": targets}})
    jobs += [{"label": "CFR+ (table)", "target": 1.0, "solver": "cfr+", "checkpoints": marks, "options": {}},
             {"label": "CFR (table)", "target": 1.0, "solver": "cfr", "checkpoints": marks, "options": {}}]
    extra_marks = [c for c in (100, args.extra_iterations) if c <= args.extra_iterations]
    jobs += [{"label": "BF+ LightGBM (20 trees x 8 leaves)", "target": None, "solver": "rcfr+",
              "checkpoints": extra_marks, "options": {"regressor": {"name": "lightgbm", "n_estimators": 20,
                                                                   "num_leaves": 8}, "features": "poker"}},
             {"label": "BF+ MLP (shared, 16x16 hidden, 50 Adam steps/fit)", "target": None, "solver": "rcfr+",
              "checkpoints": extra_marks, "options": {"regressor": {"name": "mlp", "hidden": [16, 16], "epochs": 50},
                                                     "features": "poker", "shared": True}}]
    if args.only:
        jobs = [j for j in jobs if any(j["label"].startswith(k) for k in args.only.split(","))]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(run_config, jobs))
    head = ("| variant | target size | representation size | % of sequences | expl. @100 | expl. @1000 | "
            f"expl. @{args.iterations} | ms / it |")
    lines += [head, "|---|---|---|---|---|---|---|---|"]
    for r in results:
        c = r["curve"]
        cells = [f"{c[m]:.3g}" if m in c else "-" for m in (100, 1000, args.iterations)]
        target = "-" if r["target"] is None else f"{100 * r['target']:.0f}%"
        lines.append(f"| {r['label']} | {target} | {r['size']} | {r['percent']:.1f} | " + " | ".join(cells)
                     + f" | {r['ms_per_iteration']:.2f} |")
        print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        atomic_write(args.out, lambda f: f.write(text.encode()))


if __name__ == "__main__":
    main()
