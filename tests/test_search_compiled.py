"""The compiled rollouts of the two solitaires take the same actions as the Python protocol's
step-by-step rollout (same uniforms, same chance draws), and the Can't Stop solitaire's kernels
(bust probability, luck ranking) agree with brute force over the throws."""

from collections import Counter

import numpy as np
import pytest

from rcfr.search import MCTS, CantStopSolitaire, PigSolitaire
from rcfr.search.cantstop import COUNTS, RAW_DISTINCT, ROLL, STOP, H, bust_probability, legal_moves, ranked_throw
from rcfr.search.mcts import Batch


class Replay:
    """A generator stand-in that replays given uniforms, as the compiled rollouts read them."""

    def __init__(self, u):
        self.u, self.i = u, 0

    def random(self):
        self.i += 1
        return float(self.u[self.i - 1])

    def integers(self, n):
        return int(self.random() * n)


def states(game, n, seed):
    """Positions reached by the rollout policy from the start."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        s = game.initial()
        for _ in range(int(rng.integers(0, 60))):
            nxt = game.step(s, game.default_policy(s, rng), rng)
            if game.is_terminal(nxt):
                break
            s = nxt
        out.append(s)
    return out


@pytest.mark.parametrize("game", [PigSolitaire(turns=4, cap=60), CantStopSolitaire(turns=3)], ids=lambda g: g.name)
@pytest.mark.parametrize("mode", ["fresh", "batch", "ranked"])
def test_compiled_rollout_matches_python_rollout(game, mode):
    rng = np.random.default_rng(7)
    for k, s in enumerate(states(game, 40, seed=len(mode))):
        m = MCTS(game, simulations=1, leaf="rollout", control_variates=True, antithetic=mode == "ranked", seed=k)
        u = rng.random(4000)
        batch = m.new_batch() if mode != "fresh" else None
        draws = batch.view(4000) if batch is not None else None
        value, tail, _, upos, steps = game.rollout(s, draws, 0, mode == "ranked", u, 0, True)
        replay = Replay(u)
        py_value, py_tail, py_steps = m.python_rollout(s, batch, 0, replay)
        assert (value, steps, upos) == (py_value, py_steps, replay.i)
        assert tail == pytest.approx(py_tail, abs=1e-9)
        if mode == "fresh" and upos:    # too few uniforms: the kernel says so, reading nothing past the end
            assert game.rollout(s, draws, 0, False, u[:upos - 1], 0, True)[4] == -1


def test_cantstop_kernels_match_brute_force():
    g = CantStopSolitaire()
    out = np.empty(6, dtype=np.int64)
    for s in states(g, 60, seed=4):
        perm, turn = g._arrays(s)
        busts = sum(COUNTS[d] for d in range(126) if legal_moves(perm, turn, H, d, out) == 0) / 1296
        assert bust_probability(perm, turn, H) == pytest.approx(busts, abs=1e-12)
        # the ranking is a bijection of the raw throws' distribution, luckiest first, busts last
        raws = [ranked_throw(perm, turn, H, r) for r in range(1296)]
        assert Counter(RAW_DISTINCT[raws].tolist()) == {d: int(COUNTS[d]) for d in range(126)}
        bust_ranks = [r for r, raw in enumerate(raws) if legal_moves(perm, turn, H, RAW_DISTINCT[raw], out) == 0]
        assert bust_ranks == list(range(1296 - len(bust_ranks), 1296))


def test_cantstop_solitaire_rules():
    g = CantStopSolitaire(turns=2)
    s = g.initial()
    assert g.actions(s) == (ROLL,) and g.utility(s) == 0
    from rcfr.search.cantstop import SORTED
    s = g.apply(s, ROLL, SORTED.index((1, 1, 6, 6)))          # pairings (2, 12) and (7, 7)
    assert g.actions(s) == (2 + 13 * 0 + 10, 2 + 13 * 5 + 5)
    s = g.apply(s, 2 + 13 * 0 + 10, 0)                          # columns 2 and 12: 1000/3 points each
    assert g.actions(s) == (ROLL, STOP) and g.utility(s) == 0   # not banked yet
    s = g.apply(s, STOP, 0)
    assert s[0] == 1 and g.utility(s) == pytest.approx(2000 / 3)
    assert g.utility(g.apply(g.apply(s, ROLL, SORTED.index((1, 1, 6, 6))), 2 + 13 * 5 + 5, 0)) == pytest.approx(2000 / 3)
    with pytest.raises(ValueError, match="turns"):
        CantStopSolitaire(turns=0)


CS = CantStopSolitaire(turns=1)
N = 6000


def z_score(samples, exact):
    samples = np.asarray(samples)
    return (samples.mean() - exact) / (samples.std(ddof=1) / np.sqrt(len(samples)))


class WrongBust(CantStopSolitaire):
    """Negative control: the control variate subtracts half the bust probability (mean not zero)."""

    def control(self, state, action, outcome):
        return super().control(state, action, outcome) + (0.5 * bust_probability(*self._arrays(state), H)
                                                          if action == ROLL else 0.0)


def test_cantstop_bust_control_variate_has_zero_mean():
    m = MCTS(CS, simulations=1, leaf="rollout", control_variates=True, seed=5)
    assert m.compiled
    y = [m.sample_return(CS.initial(), ROLL)[1] for _ in range(N)]
    assert abs(z_score(y, 0.0)) < 4
    wrong = WrongBust(turns=1)
    m = MCTS(wrong, simulations=1, leaf="rollout", control_variates=True, seed=5)
    assert not m.compiled                    # a subclass overriding a rule rolls out step by step
    assert abs(z_score([m.sample_return(wrong.initial(), ROLL)[1] for _ in range(N // 3)], 0.0)) > 6


def ranked_pair_means(anti, seed):
    m = MCTS(CS, simulations=1, leaf="rollout", antithetic=True, seed=seed)
    s = CS.initial()
    out = []
    for _ in range(N // 2):
        batch = m.new_batch()
        mirror = Batch(None, 0, batch, anti)
        out.append((m.sample_return(s, ROLL, batch)[0] + m.sample_return(s, ROLL, mirror)[0]) / 2)
    return np.array(out)


def test_cantstop_ranked_antithetic_pairs_are_unbiased():
    plain = MCTS(CS, simulations=1, leaf="rollout", seed=6)
    x = np.array([plain.sample_return(CS.initial(), ROLL)[0] for _ in range(N)])

    def two_sample_z(pairs):
        return (pairs.mean() - x.mean()) / np.sqrt(pairs.var(ddof=1) / len(pairs) + x.var(ddof=1) / len(x))

    pairs = ranked_pair_means(CS.antithetic, seed=7)
    assert abs(two_sample_z(pairs)) < 4
    assert pairs.var() < 0.97 * x.var() / 2  # negatively correlated partners (0.90 here): below independent pairs
    assert abs(two_sample_z(ranked_pair_means(lambda r: r // 2, seed=7))) > 6   # control: the lucky half
