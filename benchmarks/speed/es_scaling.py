"""External sampling's speed per node on games of one family at growing sizes.

    python -m benchmarks.speed.es_scaling --games "pam(horizon=3)" "pam(horizon=4)" "pam(horizon=5)"

Separates what grows with the game (its arrays no longer fit in the caches) from what a game's shape
costs (nodes per traversal, branching). Games come from the compiled-game cache ($RCFR_CACHE), so
compile once first. Each game runs in this process, one after another: a warm-up of `--seconds` CPU
seconds, then `--seconds` measured (CPU time of this single-threaded process). Columns: histories,
information sets, nodes touched per traversal, the samplers' scratch MiB, nodes per CPU second.
"""

from __future__ import annotations

import argparse
import os
import time

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from benchmarks.speed.large_games import parse  # noqa: E402


def measure(spec: str, seconds: float) -> dict:
    import rcfr
    from rcfr.sampling import driver
    from rcfr.sampling.buffers import SamplerBuffers
    from rcfr.sampling.bundles import C_TRAVERSAL, make_settings

    name, params = parse(spec)
    game = rcfr.load_game(name, **params)
    buffers = SamplerBuffers(game, "external", seed=0)
    settings = make_settings("external")
    scratch_bytes = sum(a.nbytes for a in buffers.scratch)
    t, batch = 0, 1
    for phase in ("warm-up", "measured"):
        spent, nodes, traversals = 0.0, 0, 0
        while spent < seconds:
            before, walks = buffers.nodes_touched, int(buffers.state.counters[C_TRAVERSAL])
            start = time.process_time()
            driver.run(buffers.tree, buffers.state, buffers.scratch, settings, t, batch)
            took = time.process_time() - start
            t += batch
            spent += took
            nodes += buffers.nodes_touched - before
            traversals += int(buffers.state.counters[C_TRAVERSAL]) - walks
            if took < 0.2:
                batch *= 2
    return {"game": spec, "histories": game.num_histories, "infosets": game.num_infosets,
            "nodes_per_traversal": nodes / traversals, "scratch_mib": scratch_bytes / 2**20,
            "nodes_per_s": nodes / spent}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", default=["leduc", "leduc(ranks=6, suits=4)", "pam(horizon=3)"])
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args(argv)
    print("| game | histories | infosets | nodes per traversal | scratch MiB | nodes/s |")
    print("|---|---|---|---|---|---|")
    for spec in args.games:
        r = measure(spec, args.seconds)
        print(f"| {r['game']} | {r['histories']:,} | {r['infosets']:,} | {r['nodes_per_traversal']:.0f} | "
              f"{r['scratch_mib']:.1f} | {r['nodes_per_s']:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
