"""Large games: compile speed and memory, cache reload, and the cost of solving once compiled.

    python -m benchmarks.speed.large_games                          # small games, about a minute
    python -m benchmarks.speed.large_games --games "ocp(cards=500)" "goofspiel(cards=7)"

Each game runs in a fresh subprocess so that its peak memory is its own. Times are CPU seconds of
that single-threaded process (what one core spends; on a shared machine wall time is longer), except
reloading, which is wall time. Columns: histories, information sets and sequences; compile wall and
CPU seconds and histories per CPU second; peak MiB while compiling (growth of the
process's maximum resident set over a process that has loaded the compiler) and per history; the
resident bytes per history of the compiled game with its sequence-form views; reopening the
cached file; one vanilla CFR iteration; one exact exploitability (of the uniform policy); external
sampling nodes touched per second, measured after a warm-up of the same length (the regret and
average tables fault their pages in on first use; see bench_es_scaling.py for speed against game size).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


SMALL = ["kuhn", "leduc", "leduc(ranks=6, suits=4)", "ocp(cards=100)", "nlocp(stack=20)", "goofspiel(cards=5)"]


def parse(spec: str) -> tuple[str, dict]:
    """'leduc(ranks=6, suits=4)' -> ('leduc', {'ranks': 6, 'suits': 4})."""
    match = re.fullmatch(r"\s*(\w+)\s*(?:\((.*)\))?\s*", spec)
    if not match:
        raise SystemExit(f"cannot parse game {spec!r}; write name or name(key=value, ...)")
    call = ast.parse(f"f({match.group(2) or ''})", mode="eval").body
    return match.group(1), {k.arg: ast.literal_eval(k.value) for k in call.keywords}


def _cpu(fn):
    start = time.process_time()
    result = fn()
    return result, time.process_time() - start


def _clock(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def measure(spec: str, es_seconds: float) -> dict:
    """One game, in this process (called in a subprocess by `main`)."""
    import resource

    import numpy as np

    import rcfr
    from rcfr import tree
    from rcfr.policy import Policy

    name, params = parse(spec)
    rules = rcfr.make_rules(name, **params)
    tree.compile_game(rcfr.make_rules("kuhn"))  # load the compiled driver before measuring
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    game, wall, cpu = _clock(lambda: tree.compile_game(rules))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - base
    H = game.num_histories
    row = {"game": spec, "histories": H, "infosets": game.num_infosets, "sequences": game.num_sequences,
           "fast": type(rules).fast is not rcfr.GameRules.fast, "compile_s": wall, "compile_cpu_s": cpu,
           "histories_per_cpu_s": H / cpu, "peak_mib": peak / 2**20, "peak_bytes_per_history": peak / H}
    views, row["views_s"], _ = _clock(lambda: game.views)
    view_bytes = sum(v.payoff.data.nbytes + v.payoff.indices.nbytes + v.payoff.indptr.nbytes
                     + v.infoset_first.nbytes + v.infoset_size.nbytes + v.infoset_parent.nbytes for v in views)
    row["resident_bytes_per_history"] = (game.nbytes() + view_bytes) / H
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "game.game"
        _, row["save_s"], _ = _clock(lambda: tree.save_game(game, path))
        again, row["reload_s"], _ = _clock(lambda: tree.open_game(rules, path))
        assert again is not None and np.array_equal(again.utility, game.utility)
        del again
    solver = rcfr.make_solver("cfr", game)
    solver.run(1)  # compile
    _, row["cfr_iteration_s"] = _cpu(lambda s=solver: s.run(1))
    del solver
    uniform = Policy.uniform(game)
    rcfr.exploitability(game, uniform)
    row["exploitability"], row["exploitability_s"] = _cpu(lambda: rcfr.exploitability(game, uniform))
    es = rcfr.make_solver("es-mccfr", game, seed=0)
    es.run(1)
    batch = 1
    for phase in ("warm-up", "measured"):  # pages of the sampler's tables fault in on first use
        spent, nodes = 0.0, 0
        while spent < es_seconds:  # batches long enough that per-call costs vanish
            before = es.nodes_touched
            _, seconds = _cpu(lambda: es.run(batch))
            spent, nodes = spent + seconds, nodes + es.nodes_touched - before
            if seconds < 0.2:
                batch *= 4
    row["es_nodes_per_s"] = nodes / spent
    return row


COLUMNS = [("game", "{}"), ("histories", "{:,}"), ("infosets", "{:,}"), ("sequences", "{:,}"),
           ("compile_s", "{:.2f}"), ("compile_cpu_s", "{:.2f}"), ("histories_per_cpu_s", "{:,.0f}"),
           ("peak_mib", "{:.0f}"), ("peak_bytes_per_history", "{:.0f}"), ("resident_bytes_per_history", "{:.1f}"),
           ("reload_s", "{:.3f}"), ("cfr_iteration_s", "{:.3f}"), ("exploitability_s", "{:.3f}"),
           ("es_nodes_per_s", "{:,.0f}")]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", default=SMALL, help="e.g. kuhn 'ocp(cards=500)'")
    parser.add_argument("--es-seconds", type=float, default=2.0, help="how long to run external sampling")
    parser.add_argument("--json", default=None, help="also write the rows here")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(measure(args.one, args.es_seconds)))
        return
    print("| " + " | ".join(c for c, _ in COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS))
    rows = []
    for spec in args.games:
        done = subprocess.run([sys.executable, "-m", __spec__.name, "--one", spec, "--es-seconds", str(args.es_seconds)],
                              capture_output=True, text=True, env={**os.environ, "RCFR_CACHE": "off"})
        if done.returncode:
            print(f"| {spec} | failed: {done.stderr.strip().splitlines()[-1] if done.stderr else done.returncode} |")
            continue
        row = json.loads(done.stdout.strip().splitlines()[-1])
        rows.append(row)
        print("| " + " | ".join(f.format(row[c]) for c, f in COLUMNS) + " |", flush=True)
    if args.json:
        from rcfr.files import write_json
        write_json(args.json, rows)


if __name__ == "__main__":
    main()
