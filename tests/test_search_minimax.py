"""Exact Pig values against independent methods; Expectimax, Star1, Star2 and their sparse-sampling
forms against each other and against the exact values."""

from functools import lru_cache

import numpy as np
import pytest

from rcfr.search import CantStop, EinStein, Pig, PigSolitaire, StarSearch
from rcfr.search.exact import PigValues, SolitaireValues, policy_iteration


def random_states(game, n, seed, max_moves=12):
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        s = game.initial(rng)
        for _ in range(int(rng.integers(0, max_moves))):
            if game.is_terminal(s):
                break
            s = game.step(s, game.default_policy(s, rng), rng)
        if not game.is_terminal(s):
            out.append(s)
    return out


GAMES = [(Pig(goal=40), 3), (EinStein(), 3), (CantStop(), 2)]


@pytest.mark.parametrize("goal", [6, 11])
def test_value_iteration_matches_policy_iteration(goal):
    vi = PigValues(Pig(goal=goal))
    pi = policy_iteration(goal)
    for i in range(goal):
        for j in range(goal):
            for k in range(goal - i):
                assert vi.win[i, j, k] == pytest.approx(pi[i, j, k], abs=1e-10)


def test_pig_values_are_consistent():
    g = Pig(goal=30)
    vi = PigValues(g)
    for s in random_states(g, 20, seed=1):
        best = vi.best_action(s)
        assert vi.regret(s, best) == pytest.approx(0.0, abs=1e-9)
        assert all(vi.regret(s, a) >= -1e-9 for a in g.actions(s))
        assert vi.value(s) == pytest.approx(vi.action_value(s, best), abs=1e-9)


def brute_solitaire(game):
    @lru_cache(maxsize=None)
    def v(s):
        if game.is_terminal(s):
            return game.utility(s)
        return max(sum(p * v(game.apply(s, a, o)) for o, p in zip(*game.chance(s, a))) for a in game.actions(s))
    return v


@pytest.mark.parametrize("turns,cap", [(3, 40), (2, 25)])
def test_solitaire_backward_induction_matches_brute_force(turns, cap):
    g = PigSolitaire(turns=turns, cap=cap)
    exact, brute = SolitaireValues(g), brute_solitaire(g)
    for s in [g.initial()] + random_states(g, 15, seed=2):
        assert exact.value(s) == pytest.approx(brute(s), abs=1e-9)


def test_full_depth_search_reaches_exact_solitaire_value():
    g = PigSolitaire(turns=1, cap=16)
    exact = SolitaireValues(g).value(g.initial())
    for pruning in (None, "star1", "star2"):
        value, action = StarSearch(g, pruning=pruning, depth=10).search(g.initial(), 10)
        assert value == pytest.approx(exact, abs=1e-9)


@pytest.mark.parametrize("game,depth", GAMES, ids=lambda x: getattr(x, "name", str(x)))
def test_star1_and_star2_return_expectimax_values(game, depth):
    for s in random_states(game, 4, seed=3):
        for d in range(1, depth + 1):
            exp = StarSearch(game, depth=d)
            v_exp, _ = exp.search(s, d)
            for pruning in ("star1", "star2"):
                v, a = StarSearch(game, pruning=pruning, depth=d).search(s, d)
                assert v == pytest.approx(v_exp, abs=1e-9), (pruning, s, d)
                assert a in game.actions(s)


@pytest.mark.parametrize("game,depth", GAMES, ids=lambda x: getattr(x, "name", str(x)))
def test_sparse_sampling_pruning_returns_expss_values(game, depth):
    """Star1SS and Star2SS search ExpSS's sampled tree (one outcome set per (state, action))."""
    for s in random_states(game, 4, seed=4):
        exp = StarSearch(game, width=3, depth=depth, seed=7)
        action, value, _ = exp.decide(s)
        for pruning in ("star1", "star2"):
            searcher = StarSearch(game, pruning=pruning, width=3, depth=depth, seed=7)
            a, v, _ = searcher.decide(s)
            assert v == pytest.approx(value, abs=1e-9), (pruning, s)
            assert searcher.nodes_touched <= 3 * exp.nodes_touched


def test_sparse_samples_depend_on_the_seed_and_converge():
    g = Pig(goal=40)
    s = (10, 12, 6, 0)
    exact = StarSearch(g, depth=2).search(s, 2)[0]
    values = [StarSearch(g, width=4, depth=2, seed=k).decide(s)[1] for k in range(6)]
    assert len(set(np.round(values, 9))) > 1
    wide = [StarSearch(g, width=2000, depth=2, seed=k).decide(s)[1] for k in range(3)]
    assert np.mean(wide) == pytest.approx(exact, abs=1.0)


def test_star1_prunes_and_budget_limits_depth():
    g = EinStein()
    s = random_states(g, 1, seed=5)[0]
    exp, star1 = StarSearch(g, depth=3), StarSearch(g, pruning="star1", depth=3)
    exp.search(s, 3), star1.search(s, 3)
    assert star1.nodes_touched < exp.nodes_touched
    small = StarSearch(g, nodes=500).decide(s)
    large = StarSearch(g, nodes=20_000).decide(s)
    assert small[2] < large[2] and large[0] in g.actions(s)
    with pytest.raises(ValueError, match="pruning"):
        StarSearch(g, pruning="star3", depth=1)
    with pytest.raises(ValueError, match="budget"):
        StarSearch(g)


def test_sample_sets_draw_outcomes_with_their_probabilities():
    """The sparse-sampling draw is unbiased: chi-square on 126 Can't Stop throws; drawing the distinct
    throws uniformly (ignoring their probabilities) is rejected by the same test."""
    from scipy.stats import chisquare

    from rcfr.search.cantstop import DISTINCT_PROBS, REPRESENTATIVE
    from rcfr.search.minimax import sample_set

    width = 60_000
    probs = np.array(DISTINCT_PROBS)
    for weights, unbiased in ((DISTINCT_PROBS, True), ([1 / 126] * 126, False)):
        ids, w = sample_set(REPRESENTATIVE, weights, width, stream=12345)
        counts = np.zeros(126)
        counts[[REPRESENTATIVE.index(i) for i in ids]] = np.array(w) * width
        p = chisquare(counts, probs * width).pvalue
        assert (p > 1e-4) if unbiased else (p < 1e-12)
