"""Sampled RCFR against full-width RCFR+ on Leduc hold'em (rank-only view, 672 sequences).

Best-first trees (`best_first`, poker features) with budgets of about 25% and 80% of the sequences
(split evenly between the two players); samplers external and outcome; targets stored (RCFR+,
sampled Q-regrets) and reservoir (RCFR, Deep-CFR-style buffer). Every run gets the same solver time
(`--seconds`, evaluation excluded); exploitability is recorded at checkpoints together with the
seconds and the histories touched so far (a full-width iteration counts every history once per player).
Prints two tables: exploitability at equal wall-clock time and at equal nodes touched.

    python -m benchmarks.reproductions.sampled_rcfr_leduc                   # 12 runs of 20-80 s, 2 jobs: about 6 minutes
    python -m benchmarks.reproductions.sampled_rcfr_leduc --seconds 5 --out docs/sampled_rcfr_bench.md
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

SIZES = (0.25, 0.80)
CHECKPOINTS = sorted({int(round(10 * 1.25 ** k)) for k in range(60)})  # about 25% apart
FULL_WIDTH_ITERATIONS = (10, 100, 1000)  # node budgets: this many full-width iterations' nodes


def leduc():
    return rcfr.load_game("leduc", merge_suits=True)


def configs(traversals_es: int, traversals_os: int) -> list[tuple[str, str, dict]]:
    """(label, solver, options) of each arm, trees excluded."""
    return [("full-width RCFR+", "rcfr+", {}),
            (f"ES stored+ (k={traversals_es})", "sampled-rcfr+",
             {"sampler": "external", "targets": "stored", "traversals": traversals_es}),
            (f"ES reservoir (k={traversals_es})", "sampled-rcfr",
             {"sampler": "external", "targets": "reservoir", "traversals": traversals_es}),
            (f"ES stored (k={traversals_es})", "sampled-rcfr",
             {"sampler": "external", "targets": "stored", "traversals": traversals_es}),
            (f"OS stored+ (k={traversals_os})", "sampled-rcfr+",
             {"sampler": "outcome", "targets": "stored", "traversals": traversals_os}),
            (f"OS reservoir (k={traversals_os})", "sampled-rcfr",
             {"sampler": "outcome", "targets": "reservoir", "traversals": traversals_os})]


def run(job: dict) -> dict:
    """Run until `seconds` of solver time and the largest node budget are both reached (at most 4x
    `seconds`); checkpoints (iteration, seconds, nodes, exploitability)."""
    game = leduc()
    solver = rcfr.make_solver(job["solver"], game, features="poker", **job["options"],
                              regressor={"name": "best_first", "max_leaves": job["leaves"]})
    full_width = 2 * game.num_histories
    points, elapsed = [], 0.0
    for stop in CHECKPOINTS:
        start = time.perf_counter()
        solver.run(stop - solver.iteration)
        elapsed += time.perf_counter() - start
        nodes = getattr(solver, "nodes_touched", full_width * solver.iteration)
        points.append((stop, elapsed, nodes, rcfr.exploitability(game, solver.average_policy())))
        if (elapsed >= job["seconds"] and nodes >= full_width * FULL_WIDTH_ITERATIONS[-1]) \
                or elapsed >= 4 * job["seconds"]:
            break
    return {**job, "points": points, "size": solver.size()}


def at_most(points, index: int, limit: float):
    """Exploitability at the last checkpoint whose `index` field (1 seconds, 2 nodes) is <= limit
    ("-" when the run stopped before reaching the limit)."""
    inside = [p for p in points if p[index] <= limit * (1 + 1e-9)]
    return f"{inside[-1][3]:.3g}" if inside and points[-1][index] >= limit else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=20.0, help="solver time per run")
    parser.add_argument("--traversals-es", type=int, default=32)
    parser.add_argument("--traversals-os", type=int, default=256)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", default=None, help="also write the tables (Markdown) here")
    args = parser.parse_args()
    game = leduc()
    n, full_width = game.num_sequences, 2 * game.num_histories
    jobs = [{"label": label, "solver": solver, "options": options, "budget": size, "seconds": args.seconds,
             "leaves": int(round(size * n / 2))}
            for size in SIZES for label, solver, options in configs(args.traversals_es, args.traversals_os)]
    with ProcessPoolExecutor(args.jobs) as pool:
        results = list(pool.map(run, jobs))

    T = args.seconds
    times = (T / 10, T / 4, T)
    node_budgets = [full_width * k for k in FULL_WIDTH_ITERATIONS]
    lines = [f"Leduc hold'em, rank-only view ({n} sequences, {game.num_histories} histories; a full-width "
             f"iteration touches {full_width} nodes). best_first trees, poker features, {T:g} s per run, "
             f"{args.jobs} parallel jobs. Exploitability in chips (uniform policy: 2.37).", "",
             "Equal wall-clock time (solver seconds, evaluation excluded):", "",
             "| arm | budget | size | ms / it | nodes / it | " + " | ".join(f"@{t:g} s" for t in times) + " |",
             "|---|---|---|---|---|" + "---|" * len(times)]
    for r in results:
        last = r["points"][-1]
        lines.append(f"| {r['label']} | {100 * r['budget']:.0f}% | {r['size']} | {1000 * last[1] / last[0]:.2f} | "
                     f"{last[2] / last[0]:.0f} | " + " | ".join(at_most(r["points"], 1, t) for t in times) + " |")
    lines += ["", "Equal nodes touched (in full-width iterations' worth of nodes):", "",
              "| arm | budget | " + " | ".join(f"@{b // full_width} FW its ({b:.2g} nodes)" for b in node_budgets)
              + " | iterations run |",
              "|---|---|" + "---|" * len(node_budgets) + "---|"]
    for r in results:
        lines.append(f"| {r['label']} | {100 * r['budget']:.0f}% | "
                     + " | ".join(at_most(r["points"], 2, b) for b in node_budgets)
                     + f" | {r['points'][-1][0]} |")
    text = "\n".join(lines)
    print(text)
    if args.out:
        atomic_write(args.out, lambda f: f.write((text + "\n").encode()))


if __name__ == "__main__":
    main()
