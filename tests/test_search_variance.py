"""MCTS and chapter 7's variance reduction: each estimator is unbiased for the exact value of the
rollout policy (z-tests on fixed seeds), and a deliberately biased variant fails the same test."""

import functools
import math

import numpy as np
import pytest

from rcfr.search import MCTS, CantStop, EinStein, Pig, PigSolitaire
from rcfr.search.exact import SolitaireValues
from rcfr.search.pig import DICE, ONES, ROLL, STOP

N = 3000
GAME = PigSolitaire(turns=3, cap=60)
START = GAME.initial()


@functools.cache
def policy():
    """The default rollout policy (rolls with probability 0.8), solved on first use rather than at collection."""
    return SolitaireValues(GAME, roll_prob=0.8)


def z_score(samples, exact):
    samples = np.asarray(samples)
    return (samples.mean() - exact) / (samples.std(ddof=1) / math.sqrt(len(samples)))


class WrongControl(PigSolitaire):
    """Negative control: the control variate's probability is wrong, so its mean is not zero."""

    def control(self, state, action, outcome):
        return (ONES[outcome] > 0) - 0.25 if action == ROLL else 0.0


class LuckyMirror(PigSolitaire):
    """Negative control: a 'pairing' that does not keep probabilities (every 1 becomes a 6)."""

    lucky = np.array([6 * (5 if a == 1 else a - 1) + (5 if b == 1 else b - 1) for a, b in DICE])

    def antithetic(self, outcome):
        return self.lucky[outcome]


class SkewedDice(PigSolitaire):
    """Negative control: shared batches drawn from loaded dice (the first die shows 1 to 4 only)."""

    num_raw_outcomes = 24


def test_plain_and_control_variate_returns_are_unbiased():
    exact = policy().action_value(START, ROLL)
    m = MCTS(GAME, c=100, simulations=1, leaf="rollout", control_variates=True, seed=1)
    xy = np.array([m.sample_return(START, ROLL) for _ in range(N)])
    x, z = xy[:, 0], xy[:, 0] + GAME.cv_constant * xy[:, 1]
    assert abs(z_score(x, exact)) < 4
    assert abs(z_score(z, exact)) < 4
    assert z.var() < 0.8 * x.var()                    # and the control variate does reduce variance
    wrong = WrongControl(turns=3, cap=60)
    m = MCTS(wrong, c=100, simulations=1, leaf="rollout", control_variates=True, seed=1)
    xy = np.array([m.sample_return(START, ROLL) for _ in range(N)])
    assert abs(z_score(xy[:, 0] + wrong.cv_constant * xy[:, 1], exact)) > 6


def antithetic_pairs(game, seed):
    m = MCTS(game, c=100, simulations=1, leaf="rollout", antithetic=True, seed=seed)
    out = []
    for _ in range(N // 2):
        batch = m.new_batch()
        out.append((m.sample_return(START, ROLL, batch)[0], m.sample_return(START, ROLL, m.mirror(batch))[0]))
    return np.array(out)


def test_antithetic_pairs_are_unbiased_and_negatively_correlated():
    exact = policy().action_value(START, ROLL)
    pairs = antithetic_pairs(GAME, seed=2)
    assert abs(z_score(pairs.mean(axis=1), exact)) < 4
    assert np.corrcoef(pairs.T)[0, 1] < 0
    assert abs(z_score(antithetic_pairs(LuckyMirror(turns=3, cap=60), seed=2).mean(axis=1), exact)) > 6


def crn_differences(game, seed):
    m = MCTS(game, c=100, simulations=1, leaf="rollout", common_random_numbers=True, seed=seed)
    out = []
    for _ in range(N):
        batch = m.new_batch()
        out.append(m.sample_return(START, ROLL, batch)[0] - m.sample_return(START, STOP, batch)[0])
    return np.array(out)


def test_common_random_numbers_difference_is_unbiased():
    exact = policy().action_value(START, ROLL) - policy().action_value(START, STOP)
    shared = crn_differences(GAME, seed=3)
    assert abs(z_score(shared, exact)) < 4
    m = MCTS(GAME, c=100, simulations=1, leaf="rollout", seed=3)
    independent = np.array([m.sample_return(START, ROLL)[0] - m.sample_return(START, STOP)[0] for _ in range(N)])
    assert shared.var() < 0.8 * independent.var()
    assert abs(z_score(crn_differences(SkewedDice(turns=3, cap=60), seed=3), exact)) > 6


def root_differences(seeds, **options):
    out = []
    for seed in seeds:
        _, values = MCTS(GAME, c=100, simulations=128, leaf="rollout", recommend="mean", seed=seed,
                         **options).action_values(START)
        out.append(values[0] - values[1])
    return np.array(out)


def test_variance_reduction_in_uct_lowers_the_variance_of_the_root_difference():
    seeds = range(30)
    plain = root_differences(seeds)
    for options in ({"control_variates": True}, {"control_variates": True, "common_random_numbers": True}):
        assert root_differences(seeds, **options).var() < 0.7 * plain.var(), options


def test_uct_finds_the_optimal_solitaire_action():
    g = PigSolitaire(turns=1, cap=30)
    exact = SolitaireValues(g)
    s = (1, 0, 20)              # last turn, 20 points at stake: stopping is right
    best = max(g.actions(s), key=lambda a: exact.action_value(s, a))
    action, value, sims = MCTS(g, c=15, simulations=2000, leaf="rollout", seed=0).decide(s)
    assert action == best and value == pytest.approx(exact.action_value(s, best), abs=1.0)


@pytest.mark.parametrize("game", [Pig(goal=50), EinStein(), CantStop()], ids=lambda g: g.name)
def test_double_progressive_widening_limits_the_tree(game):
    C, alpha = 2.0, 0.3
    m = MCTS(game, simulations=300, widening=(C, alpha), seed=0)
    root = m.run(game.initial(np.random.default_rng(0)))
    tried = sum(1 for n in root.n if n)
    assert tried <= math.ceil(C * root.visits ** alpha)
    for i, children in enumerate(root.children):
        if children:
            assert len(children) <= math.ceil(C * root.n[i] ** alpha)
    assert root.visits == 300 and m.decide(root.state)[0] in game.actions(root.state)


def test_mcts_rejects_bad_options():
    with pytest.raises(ValueError, match="allowed: evaluate, rollout"):
        MCTS(GAME, simulations=1, leaf="random")
    with pytest.raises(ValueError, match="antithetic"):
        MCTS(EinStein(), simulations=1, antithetic=True)
    with pytest.raises(ValueError, match="widening"):
        MCTS(GAME, simulations=1, widening=(1.0, 2.0))
