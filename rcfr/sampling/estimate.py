"""Sampled counterfactual regrets at a fixed profile: the mean over many traversals of one sampler.

This is the check that a sampler is unbiased (the mean must match `exact_regrets`) and the way to
turn sampled traversals into training data for a regret estimator without running a solver.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import kernels as full
from ..policy import Policy
from ..registry import check_choice
from ..tree import Game
from . import kernels
from .buffers import SamplerBuffers


@dataclass(frozen=True)
class RegretEstimate:
    """Per global sequence: mean sampled regret, its standard error, and the mean average-strategy
    increment of the other player, over `samples` traversals."""

    mean: np.ndarray
    stderr: np.ndarray
    average_increment: np.ndarray
    samples: int
    nodes_touched: int


def estimate_regrets(game: Game, sampler: str, policy: Policy, traverser: int, samples: int, *,
                     seed: int = 0, epsilon: float = 0.6, averaging: str = "stochastic",
                     baseline: np.ndarray | None = None) -> RegretEstimate:
    """Run `samples` traversals of `sampler` ("outcome", "external", "chance", "baseline") at the fixed
    `policy`.

    `traverser` is 0 or 1, or 2 for the parallel (outcome) / simultaneous (chance) forms; traversal k
    counts as iteration k for the optimistic and lazy `averaging` modes. The "baseline" sampler
    (variance-reduced outcome sampling) uses the fixed per-history `baseline` (zeros by default).
    """
    modes = {"stochastic": kernels.AVG_STOCHASTIC, "optimistic": kernels.AVG_OPTIMISTIC, "lazy": kernels.AVG_LAZY}
    mode = modes[check_choice("averaging", averaging, list(modes))]
    if traverser not in (0, 1, 2) or (traverser == 2 and sampler == "external"):
        raise ValueError(f"traverser must be 0 or 1 (or 2 except for external sampling), got {traverser!r}")
    if not isinstance(samples, (int, np.integer)) or samples < 1:
        raise ValueError(f"samples must be a positive integer, got {samples!r}")
    buffers = SamplerBuffers(game, sampler, seed)
    buffers.sigma[:] = policy.probs
    sums, squares = np.zeros(game.num_sequences), np.zeros(game.num_sequences)
    if baseline is not None:
        if sampler != "baseline" or np.shape(baseline) != buffers.baseline.shape:
            raise ValueError(f"baseline needs sampler='baseline' and shape {buffers.baseline.shape}")
        buffers.baseline[:] = baseline
    if sampler == "baseline":
        kernels.estimate_baseline(buffers.tree, buffers.state, buffers.scratch, buffers.baseline, traverser,
                                  float(epsilon), 0.0, samples, mode, sums, squares)
    elif sampler == "outcome":
        kernels.estimate_outcome(buffers.tree, buffers.state, buffers.scratch, traverser, float(epsilon),
                                 samples, mode, sums, squares)
    elif sampler == "external":
        kernels.estimate_external(buffers.tree, buffers.state, buffers.scratch, traverser, samples, mode, sums,
                                  squares)
    else:
        kernels.estimate_chance(buffers.tree, buffers.state, buffers.scratch, traverser, samples, mode, sums,
                                squares)
    mean = sums / samples
    variance = np.maximum(squares / samples - mean ** 2, 0.0)
    return RegretEstimate(mean=mean, stderr=np.sqrt(variance / samples), average_increment=buffers.avg / samples,
                          samples=samples, nodes_touched=buffers.nodes_touched)


def exact_regrets(game: Game, policy: Policy, player: int) -> np.ndarray:
    """Exact instantaneous counterfactual regrets of `player`'s sequences (global ids; zero elsewhere)."""
    out = np.zeros(game.num_sequences)
    views = game.views
    view = views[player]
    opponent = views[1 - player].plan(policy.local(1 - player))
    values = view.terminal_values(opponent)
    regrets = np.zeros(view.num_sequences)
    full.counterfactual_regrets(values, policy.local(player), view.infoset_first, view.infoset_size,
                                view.infoset_parent, regrets)
    out[view.offset:view.offset + view.num_sequences - 1] = regrets[1:]
    return out


def expected_average_increment(game: Game, policy: Policy, player: int) -> np.ndarray:
    """What every sampler's stochastically weighted average-strategy increment for `player` equals in
    expectation: chance reach of the information set x the player's own reach x sigma (global ids)."""
    out = np.zeros(game.num_sequences)
    view = game.views[player]
    plan = view.plan(policy.local(player))
    decisions = np.flatnonzero(game.player == player)
    chance = np.bincount(game.infoset[decisions], game.chance_reach[decisions], minlength=game.num_infosets)
    seqs = np.arange(view.offset, view.offset + view.num_sequences - 1)
    out[seqs] = chance[game.sequence_infoset[seqs]] * plan[1:]
    return out
