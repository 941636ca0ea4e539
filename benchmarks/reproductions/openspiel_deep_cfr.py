"""OpenSpiel's PyTorch Deep CFR beside rcfr's `deep-cfr` (and the best rcfr configuration), scored exactly.

OpenSpiel's solver (`open_spiel.python.pytorch.deep_cfr`, the `openspiel` extra, plus `dm-tree`) runs with
the settings of its upstream example (examples/deep_cfr_pytorch.py: one hidden layer of 64, learning rate
1e-3, batches of 256, memory 1e5, 375 advantage and 2500 policy steps, advantage networks reinitialized)
for `--iterations` x `--traversals`; its average policy (the policy network) comes back through the
policy bridge (`rcfr.Policy.from_openspiel`; its float32 rows renormalized over the legal actions,
which they miss by up to ~1e-2) and is scored by `rcfr.evaluate`. Its nodes touched
are the calls of its tree walk (every history visited, chance nodes included; OpenSpiel does not collapse
forced moves, so the count is comparable but not identical to ours). rcfr's arms run at equal traversals.

    OMP_NUM_THREADS=1 python -m benchmarks.reproductions.openspiel_deep_cfr --game leduc --iterations 20 --traversals 375

At the recommended budget (100 x 1500, five seeds; ~940 CPU s a seed), OpenSpiel's runs alone, the family then run
at their node count by the kit (docs/neural.md, "Against OpenSpiel's Deep CFR"):

    OMP_NUM_THREADS=1 python -m benchmarks.reproductions.openspiel_deep_cfr --iterations 100 --traversals 1500 \
        --seeds 0 1 2 3 4 --openspiel-only

Prints a Markdown table; `--csv PATH` also writes the rows. Times are wall and process CPU seconds on
whatever machine runs it (say which when quoting them).
"""

from __future__ import annotations

import argparse
import csv
import os
import time

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

OPENSPIEL_NAMES = {"kuhn": "kuhn_poker", "leduc": "leduc_poker"}


def run_openspiel(game, name: str, iterations: int, traversals: int, seed: int) -> dict:
    import pyspiel
    import torch
    from open_spiel.python import policy as os_policy
    from open_spiel.python.pytorch import deep_cfr

    from rcfr import Policy, evaluate

    torch.set_num_threads(1)
    os_game = pyspiel.load_game(OPENSPIEL_NAMES[name])
    solver = deep_cfr.DeepCFRSolver(
        os_game, policy_network_layers=(64,), advantage_network_layers=(64,), num_iterations=iterations,
        num_traversals=traversals, reinitialize_advantage_networks=True, learning_rate=1e-3,
        batch_size_advantage=256, batch_size_strategy=256, memory_capacity=100000,
        policy_network_train_steps=2500, advantage_network_train_steps=375, seed=seed)
    walk, nodes = solver._traverse_game_tree, [0]

    def counted(state, player):
        nodes[0] += 1
        return walk(state, player)

    solver._traverse_game_tree = counted  # the walk recurses through the attribute, so every history counts
    wall, cpu = time.perf_counter(), time.process_time()
    solver.solve()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"OpenSpiel deep_cfr: {wall:.1f} s wall, {cpu:.1f} s CPU, {nodes[0]} nodes", flush=True)
    tabular = os_policy.tabular_policy_from_callable(os_game, solver.action_probabilities)
    # its policy network's float32 softmax rows sum to 1 only within ~1e-2 over the legal actions: renormalize
    rows = tabular.action_probability_array * tabular.legal_actions_mask
    tabular.action_probability_array = rows / rows.sum(axis=1, keepdims=True)
    mbb = evaluate(game, Policy.from_openspiel(game, tabular)).exploitability_mbb
    return {"method": "OpenSpiel deep_cfr (example settings)", "seed": seed, "iterations": iterations,
            "traversals": traversals, "nodes_touched": nodes[0], "seconds": wall, "cpu_seconds": cpu,
            "exploitability_mbb": mbb}


def run_rcfr(game, label: str, solver_name: str, options: dict, iterations: int, seed: int) -> dict:
    from rcfr import evaluate, make_solver
    wall, cpu = time.perf_counter(), time.process_time()
    solver = make_solver(solver_name, game, seed=seed, **options)
    solver.run(iterations)
    policy = solver.average_policy()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"method": label, "seed": seed, "iterations": iterations, "traversals": options.get("traversals", ""),
            "nodes_touched": solver.nodes_touched, "seconds": wall, "cpu_seconds": cpu,
            "exploitability_mbb": evaluate(game, policy).exploitability_mbb}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", default="leduc", choices=sorted(OPENSPIEL_NAMES))
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--traversals", type=int, default=375)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--skip-openspiel", action="store_true")
    parser.add_argument("--openspiel-only", action="store_true",
                        help="OpenSpiel's runs alone (the family at its node count: a kit sweep, docs/neural.md)")
    parser.add_argument("--csv", default=None)
    args = parser.parse_args()

    import torch

    from rcfr import load_game
    torch.set_num_threads(1)
    game = load_game(args.game)
    network = {"name": "mlp", "hidden": [64], "epochs": 100, "learning_rate": 3e-3, "batch_size": 512}
    trees = {"name": "best_first", "max_leaves": 256}
    arms = [("rcfr deep-cfr, MLP 64, equal traversals", "deep-cfr",
             {"traversals": args.traversals, "regressor": network}),
            ("rcfr deep-cfr, best-first trees 256, equal traversals", "deep-cfr",
             {"traversals": args.traversals, "regressor": trees}),
            ("rcfr sd-cfr, best-first trees 256, equal traversals", "sd-cfr",
             {"traversals": args.traversals, "regressor": trees})]
    rows = []
    for seed in args.seeds:
        if not args.skip_openspiel:
            rows.append(run_openspiel(game, args.game, args.iterations, args.traversals, seed))
            print(rows[-1], flush=True)
        for label, name, options in [] if args.openspiel_only else arms:
            rows.append(run_rcfr(game, label, name, options, args.iterations, seed))
            print(rows[-1], flush=True)
    print(f"\n{args.game}, {args.iterations} iterations x {args.traversals} traversals per player\n")
    print("| method | seed | nodes touched | wall s | CPU s | exploitability (mbb/g) |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['method']} | {r['seed']} | {r['nodes_touched']:.3g} | {r['seconds']:.1f} | "
              f"{r['cpu_seconds']:.1f} | {r['exploitability_mbb']:.1f} |")
    if args.csv:
        with open(args.csv, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    main()
