"""External sampling of Bluff on its public tree (direct index) against the general walk on the rules (hash
of codes): CPU time per iteration, histories, memory, and the exact exploitability reached (issue 35, item 1).

    python -m benchmarks.speed.bluff_public_es --dice 2,2 --seconds 60           # float32 tables by default
    python -m benchmarks.speed.bluff_public_es --dice 2,1 --seconds 20 --walks public general

Each case runs in a process of its own (so its peak resident memory is its own): the solver is built, run
for `--seconds` CPU seconds in chunks (the first chunk, which loads numba's cache, is timed apart), and its
average is evaluated exactly (`BluffPublicCFR.exploitability` on the public tree; the general run's
`CodePolicy` through `rcfr.exploitability`, the same public-tree walk).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

COLUMNS = ["dice", "walk", "dtype", "build_s", "first_chunk_s", "iterations", "ms_per_iteration",
           "histories_per_iteration", "state_mib", "eval_s", "exploitability", "peak_mib"]


def run_case(dice: tuple[int, int], walk: str, dtype: str, seconds: float, seed: int) -> dict:
    import rcfr
    from rcfr.errors import RulesPathWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RulesPathWarning)
        game = rcfr.load_game("liars_dice", dice1=dice[0], dice2=dice[1], compiled=False)
    start = time.process_time()
    options = {"dtype": dtype} if walk == "public" else {}
    solver = rcfr.make_solver("es-mccfr", game, walk=walk, seed=seed, **options)
    build = time.process_time() - start
    start = time.process_time()
    solver.run(10)
    first = time.process_time() - start
    done, used, chunk = 0, 0.0, 100
    nodes0 = solver.nodes_touched
    while used < seconds:
        start = time.process_time()
        solver.run(chunk)
        used += time.process_time() - start
        done += chunk
        chunk *= 2
    histories = (solver.nodes_touched - nodes0) / done
    start = time.process_time()
    if walk == "public":
        value = solver.exploitability().exploitability
        state = solver.regrets.nbytes + solver.avg.nbytes + solver.full.nbytes
    else:
        value = rcfr.exploitability(game, solver.average_policy())
        state = solver.state_bytes()
    evaluation = time.process_time() - start
    return {"dice": f"{dice[0]},{dice[1]}", "walk": walk, "dtype": dtype if walk == "public" else "float64",
            "build_s": round(build, 2), "first_chunk_s": round(first, 2), "iterations": done + 10,
            "ms_per_iteration": round(1000 * used / done, 4), "histories_per_iteration": round(histories),
            "state_mib": round(state / 2**20), "eval_s": round(evaluation, 1), "exploitability": f"{value:.6f}",
            "peak_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dice", default="2,2")
    parser.add_argument("--walks", nargs="+", default=["public", "general"], choices=["public", "general"])
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--seconds", type=float, default=60.0, help="CPU seconds of iterations per case")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--case", help=argparse.SUPPRESS)  # one case, in a child process
    args = parser.parse_args()
    dice = tuple(int(d) for d in args.dice.split(","))
    if args.case:
        print(json.dumps(run_case(dice, args.case, args.dtype, args.seconds, args.seed)))
        return
    print("| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS))
    for walk in args.walks:
        child = [sys.executable, "-m", __spec__.name, *sys.argv[1:], "--case", walk]
        row = json.loads(subprocess.run(child, check=True, capture_output=True, text=True).stdout.splitlines()[-1])
        print("| " + " | ".join(str(row[c]) for c in COLUMNS) + " |", flush=True)


if __name__ == "__main__":
    main()
