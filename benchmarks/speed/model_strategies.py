"""What a set's strategy costs from a compiled model, against the batched Python path, on Bluff(2,2) walked
by its rules; and an external-sampling iteration of the same game for scale.

    python -m benchmarks.speed.model_strategies                    # 300 iterations of lean RCFR+, 4,096 leaves
    python -m benchmarks.speed.model_strategies --iterations 600 --leaves 16384

Lean sampled RCFR+ (the `RCFR_PLUS` arm of benchmarks/studies/bluff22_recall.py: best-first trees, stored targets,
external sampling) runs `--iterations` iterations with a refit every `--refit-every`, so it has met sets
and fitted trees; then, per player, over every set met: the compiled path (`model_strategies`: encoder rows,
`predict_row`, regret matching, one compiled call) and the lean path's refresh (`_refresh_all`: encoder rows,
the regressor's `predict`, `match_predictions`, in batches of 16,384 sequences: the Python path at its
cheapest per set), fastest of `--repeats`; both give the same strategies (checked). ES: milliseconds and
histories touched per iteration over `--es-iterations` (after as many as warm-up). "of which rows and
matching": the same call with a one-leaf tree (the encoder's rows and regret matching, no tree descent).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import rcfr
from rcfr.regressors import BestFirstTree, compile_model
from rcfr.solvers import SampledRCFRPlus, make_solver
from rcfr.solvers.lean_rules import PLAYER
from rcfr.solvers.model_strategies import model_strategies


def fastest(repeats: int, fn, *args) -> float:
    """The least CPU seconds of `repeats` calls of fn(*args)."""
    best = np.inf
    for _ in range(repeats):
        start = time.process_time()
        fn(*args)
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--refit-every", type=int, default=100)
    parser.add_argument("--leaves", type=int, default=4096)
    parser.add_argument("--es-iterations", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    game = rcfr.load_game("liars_dice", dice1=2, dice2=2, compiled=False)
    lean = SampledRCFRPlus(game, features_on_demand=True, features="liars_dice", sampler="external",
                           regressor={"name": "best_first", "max_leaves": args.leaves}, targets="stored",
                           capacity=100_000, refit_every=args.refit_every, seed=0).run(args.iterations)
    tree = lean.buffers.tree
    print("| player | sets met | leaves | compiled µs / set | of which rows and matching | batched Python µs / set | ratio |")
    print("|---|---|---|---|---|---|---|")
    for p in (0, 1):
        sets = lean._player_sets(p)
        states, sizes = tree.set_states[sets, :PLAYER], tree.num_actions[sets]
        model, t = compile_model(lean.regressors[p]), int(lean.fits[p]["count"][1])
        ours = model_strategies(model, lean.encoder, states, sizes, t)
        compiled = fastest(args.repeats, model_strategies, model, lean.encoder, states, sizes, t)
        batched = fastest(args.repeats, lean._refresh_all, p)
        width = lean.encoder.num_features  # a one-leaf tree: what the rows and regret matching cost alone
        leaf = compile_model(BestFirstTree(max_leaves=2).fit(np.zeros((2, width)), np.ones(2)))
        rows_only = fastest(args.repeats, model_strategies, leaf, lean.encoder, states, sizes, t)
        theirs = np.concatenate([lean.buffers.state.sigma[f:f + n] for f, n in zip(tree.first_seq[sets], sizes)])
        assert np.array_equal(ours, theirs), "compiled and batched strategies differ"
        print(f"| {p} | {len(sets):,} | {lean.regressors[p].size():,} | {1e6 * compiled / len(sets):.2f} | "
              f"{1e6 * rows_only / len(sets):.2f} | {1e6 * batched / len(sets):.2f} | {batched / compiled:.1f}x |")
    es = make_solver("es-mccfr", game, seed=0).run(args.es_iterations)
    nodes, start = es.nodes_touched, time.process_time()
    es.run(args.es_iterations)
    seconds = time.process_time() - start
    print(f"\nES: {1e3 * seconds / args.es_iterations:.2f} ms and {(es.nodes_touched - nodes) / args.es_iterations:,.0f} "
          f"histories touched per iteration (iterations {args.es_iterations + 1}-{2 * args.es_iterations})")


if __name__ == "__main__":
    main()
