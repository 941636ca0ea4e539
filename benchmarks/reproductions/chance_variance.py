"""Variance of chance-sampled regrets on Bluff(1,1): one sampled outcome per chance node, antithetic pairs
and common chance-sampling (Lanctot 2013, §7.5), at fixed profiles.

Fig 7.5 plots exploitability against nodes touched; this script measures what explains it: per traversal,
V = E||delta - r||^2 (the sampled regrets' variance summed over sequences) and the nodes touched, and
their product, the variance at equal work (V x nodes: k independent traversals cost k times the nodes and
have V / k; a variant whose product is lower is worth its extra nodes). Mean over batches of traversals
with 95% confidence intervals.

    python -m benchmarks.reproductions.chance_variance            # about 3 minutes on a loaded core
    python -m benchmarks.reproductions.chance_variance --quick    # fewer traversals
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

import rcfr  # noqa: E402
from rcfr import Policy, make_solver  # noqa: E402
from rcfr.sampling import RegretSampler  # noqa: E402

VARIANTS = ("single", "paired", "common")


def batch_variances(game, policy, chance_sampling, traverser, nodes, batches, seed):
    """Per batch: the within-batch variance of the sampled regrets summed over sequences, and nodes touched
    per traversal; each batch costs about `nodes` / `batches` nodes."""
    sampler = RegretSampler(game, "chance", seed=seed, chance_sampling=chance_sampling)
    probe = sampler.sample(policy, traverser, 2)
    size = max(2, int(nodes / batches / (probe.nodes_touched / 2)))
    out, touched = [], 0
    for _ in range(batches):
        est = sampler.sample(policy, traverser, size)
        out.append((est.stderr ** 2).sum() * size * size / (size - 1))
        touched += est.nodes_touched
    return np.array(out), touched / (batches * size)


def ci(values):
    half = stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values))
    return values.mean(), half


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--trained-iterations", type=int, default=10_000,
                        help="iterations of CS (alternating) whose current strategy is the second profile")
    args = parser.parse_args()
    nodes, batches = (3e6, 10) if args.quick else (3e7, 30)
    game = rcfr.load_game("liars_dice")
    t = time.time()
    trained = make_solver("cscfr", game, updates="alternating", seed=0).run(args.trained_iterations)
    profiles = {"random (seed 7)": Policy.random(game, seed=7),
                f"CS current strategy after {args.trained_iterations:,} iterations": trained.current_policy()}
    print(f"Bluff(1,1); ~{nodes:.0e} nodes per variant and traverser in {batches} batches; "
          f"training took {time.time() - t:.0f} s\n")
    print("| profile | traverser | variant | V per traversal | nodes per traversal | V x nodes | vs single |")
    print("|---|---|---|---|---|---|---|")
    for name, policy in profiles.items():
        for traverser in (0, 1):
            base = None
            for variant in VARIANTS:
                v, per = batch_variances(game, policy, variant, traverser, nodes, batches, seed=1)
                mean, half = ci(v)
                work = mean * per
                base = work if base is None else base
                print(f"| {name} | {traverser} | {variant} | {mean:.4g} ± {half:.2g} | {per:,.0f} | {work:.4g} ± "
                      f"{half * per:.2g} | {work / base:.2f} |", flush=True)


if __name__ == "__main__":
    main()
