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
from . import driver
from .buffers import AVERAGE_MODES, BASELINE_SAMPLERS, PUBLIC, SamplerBuffers
from .bundles import COMMON, make_settings, make_tally


@dataclass(frozen=True)
class RegretEstimate:
    """Per global sequence: mean sampled regret, its standard error, and the mean average-strategy
    increment of the other player, over `samples` traversals."""

    mean: np.ndarray
    stderr: np.ndarray
    average_increment: np.ndarray
    visits: np.ndarray  # per sequence: how many of the traversals visited it (its information set)
    samples: int
    nodes_touched: int


class RegretSampler:
    """Sampled counterfactual regrets of a given strategy profile, batch after batch, with one persistent
    random stream: the training-data source for a sampled regret estimator (sampled RCFR).

    `sampler` is "outcome", "external", "chance", "baseline" (variance-reduced outcome sampling with
    the fixed per-history `baseline`, zeros by default), "infoset_baseline" (the same with baselines per
    information set and action, MCCFRb: `baseline` holds traverser 0's row then traverser 1's, each over
    global sequence ids), "pure" (pure CFR), "average" (average
    strategy sampling with floor `epsilon`, `tau`, `beta`, steered by the fixed average-strategy sums
    `sampling_average`, global sequence ids), "probing" (the same sampling, probes for the rest) or
    "public" (public chance sampling, `chance_walks.public_chance_walk`; ``public_chance="enumerate"`` walks every
    public outcome, which gives the exact regrets; its average increment is the *traverser's* own);
    "chance" takes `chance_sampling` ("single", "paired" or "common", as `ChanceSamplingCFR`).
    Each `sample` call runs its own traversals; within a call, traversal k counts as iteration k for
    the optimistic and lazy `average_mode`s.
    """

    def __init__(self, game: Game, sampler: str, *, seed: int = 0, epsilon: float = 0.6,
                 average_mode: str = "stochastic", baseline: np.ndarray | None = None, tau: float = 1.0,
                 beta: float = 0.0, sampling_average: np.ndarray | None = None, public_chance: str = "sample",
                 chance_sampling: str = "single"):
        self.game = game
        if public_chance != "sample" and sampler != PUBLIC:
            raise ValueError(f"public_chance={public_chance!r} needs sampler 'public', not {sampler!r}")
        if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0.0 < epsilon <= 1.0:
            raise ValueError(f"epsilon must be a number in (0, 1], got {epsilon!r}")
        check_choice("average_mode", average_mode, list(AVERAGE_MODES))
        if sampler == PUBLIC:
            if average_mode == "lazy":
                raise ValueError("average_mode='lazy' is not available for public chance sampling; allowed: "
                                 "'stochastic', 'optimistic'")
            check_choice("public_chance", public_chance, ["sample", "enumerate"])
        self.buffers = SamplerBuffers(game, sampler, seed, chance_sampling=chance_sampling)
        self.sampler = sampler
        self.epsilon = float(epsilon)
        # a fixed profile: no regret updates, baselines held fixed (decay 0)
        self.settings = make_settings(sampler, epsilon=self.epsilon, tau=tau, beta=beta, average_mode=average_mode,
                                      chance_sampling=chance_sampling, public_chance=public_chance)
        self.public = self.buffers.tree.public  # replaceable, e.g. by a deliberately biased copy in a test
        if baseline is not None:
            if sampler not in BASELINE_SAMPLERS or np.shape(baseline) != self.buffers.baseline.shape:
                raise ValueError(f"baseline needs a sampler in {BASELINE_SAMPLERS} and shape {self.buffers.baseline.shape}")
            self.buffers.baseline[:] = baseline
        self.sampling_average = np.zeros(game.num_sequences)
        if sampling_average is not None:
            if sampler not in ("average", "probing") or np.shape(sampling_average) != (game.num_sequences,):
                raise ValueError(f"sampling_average needs sampler 'average' or 'probing' and shape "
                                 f"({game.num_sequences},)")
            self.sampling_average[:] = sampling_average

    def sample(self, policy: Policy | np.ndarray, traverser: int, samples: int) -> RegretEstimate:
        """`samples` traversals at `policy` (a Policy or probabilities over global sequences).

        `traverser` is 0 or 1, or 2 for simultaneous updates (outcome and chance sampling). The mean
        is over all traversals, counting a sequence that was not visited as a zero sample.
        """
        if traverser not in (0, 1, 2) or (traverser == 2 and self.sampler not in ("outcome", "chance", *BASELINE_SAMPLERS,
                                                                                  PUBLIC)) or (
                traverser == 2 and self.sampler == "chance" and self.settings.chance_sampling == COMMON):
            raise ValueError(f"traverser must be 0 or 1 (or 2 for outcome, chance, baseline and public sampling, not "
                             f"common chance-sampling), "
                             f"got {traverser!r}")
        if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 1:
            raise ValueError(f"samples must be a positive integer, got {samples!r}")
        b = self.buffers
        if isinstance(policy, Policy):
            self.game.check_same("policy", policy.game)
        b.sigma[:] = policy.probs if isinstance(policy, Policy) else policy
        b.avg[:] = self.sampling_average  # zeros except for average strategy sampling
        b.last[:] = 0.0
        nodes = b.nodes_touched
        tally = make_tally(self.game.num_sequences, len(b.tree.num_actions))
        tree = b.tree._replace(public=self.public) if self.sampler == PUBLIC else b.tree
        driver.estimate(tree, b.state, b.scratch, self.settings, traverser, samples, tally)
        mean, visits = tally.sums / samples, tally.visits
        variance = np.maximum(tally.squares / samples - mean ** 2, 0.0)
        increment = (b.avg - self.sampling_average) / samples
        return RegretEstimate(mean=mean, stderr=np.sqrt(variance / samples), average_increment=increment,
                              visits=visits, samples=samples, nodes_touched=b.nodes_touched - nodes)


def estimate_regrets(game: Game, sampler: str, policy: Policy, traverser: int, samples: int, *,
                     seed: int = 0, epsilon: float = 0.6, average_mode: str = "stochastic",
                     baseline: np.ndarray | None = None, **options) -> RegretEstimate:
    """One-off `RegretSampler(game, sampler, ...).sample(policy, traverser, samples)`."""
    return RegretSampler(game, sampler, seed=seed, epsilon=epsilon, average_mode=average_mode,
                         baseline=baseline, **options).sample(policy, traverser, samples)


def exact_regrets(game: Game, policy: Policy, player: int) -> np.ndarray:
    """Exact instantaneous counterfactual regrets of `player`'s sequences (global ids; zero elsewhere)."""
    game.check_same("policy", policy.game)
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
    game.check_same("policy", policy.game)
    out = np.zeros(game.num_sequences)
    view = game.views[player]
    plan = view.plan(policy.local(player))
    decisions = np.flatnonzero(game.player == player)
    chance = np.bincount(game.infoset[decisions], game.chance_reach[decisions], minlength=game.num_infosets)
    seqs = np.arange(view.offset, view.offset + view.num_sequences - 1)
    out[seqs] = chance[game.sequence_infoset[seqs]] * plan[1:]
    return out
