"""Exact evaluation over the rules (`rcfr.evaluation.rules`) and code-keyed policies (`rcfr.policy.rules`):
the same numbers as the compiled path (`rcfr.evaluation`) to 1e-12, on games with public and hidden actions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

import rcfr
from rcfr.compiler import replay
from rcfr.errors import PolicyError
from rcfr.evaluation import rules as rules_eval
from rcfr.policy.rules import CodePolicy, fast_game, infoset_codes

GAMES = [
    ("kuhn", {}),
    ("leduc", {}),
    ("goofspiel", {"cards": 4}),  # hidden bids
    ("liars_dice", {}),
    ("latent_ttt", {"opening": (4, 0, 8)}),  # hidden moves
    ("dieroll", {"faces": 3}),
    ("pam", {"horizon": 2}),  # hidden moves, simultaneous
]

_games: dict = {}


def compiled(name, params):
    key = (name, tuple(sorted(params.items())))
    if key not in _games:
        _games[key] = rcfr.load_game(name, **params)
    return _games[key]


def assert_same(game, policy, code_policy, default=None):
    want = rcfr.evaluate(game, policy)
    got = rules_eval.evaluate(game.rules, code_policy, default)
    assert abs(got.value - want.value) < 1e-12
    for p in (0, 1):
        assert abs(got.best_response_values[p] - want.best_response_values[p]) < 1e-12
    assert abs(got.nash_conv - want.nash_conv) < 1e-12
    assert abs(got.exploitability - want.exploitability) < 1e-12
    assert abs(got.exploitability_mbb - want.exploitability_mbb) < 1e-9


@pytest.mark.parametrize("name, params", GAMES)
@pytest.mark.parametrize("seed", [0, 1])
def test_rules_path_equals_compiled_path(name, params, seed):
    game = compiled(name, params)
    policy = rcfr.Policy.random(game, seed)
    code_policy = CodePolicy.from_policy(policy)
    assert_same(game, policy, code_policy)
    rules = game.rules
    assert abs(rules_eval.expected_value(rules, code_policy) - rcfr.expected_value(game, policy)) < 1e-12
    for p in (0, 1):
        want = rcfr.evaluation.best_response(game, policy, p)[0]
        assert abs(rules_eval.best_response_value(rules, code_policy, p) - want) < 1e-12
    assert abs(rules_eval.nash_conv(rules, code_policy) - rcfr.nash_conv(game, policy)) < 1e-12
    for unit in ("chips", "mbb"):
        assert abs(rules_eval.exploitability(rules, code_policy, unit=unit)
                   - rcfr.exploitability(game, policy, unit=unit)) < 1e-9
    # the round trip through codes gives the compiled policy back exactly
    assert np.array_equal(code_policy.to_policy(game).probs, policy.probs)
    assert code_policy.num_infosets == game.num_infosets


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), which=st.sampled_from(["kuhn", "leduc", "goofspiel"]))
def test_random_policies(seed, which):
    name, params = next(g for g in GAMES if g[0] == which)
    game = compiled(name, params)
    policy = rcfr.Policy.random(game, seed)
    assert_same(game, policy, CodePolicy.from_policy(policy))


def test_a_compiled_policy_is_converted_on_the_way_in():
    game = compiled("kuhn", {})
    policy = rcfr.Policy.random(game, 3)
    assert rules_eval.exploitability(game.rules, policy) == pytest.approx(rcfr.exploitability(game, policy), abs=1e-12)


def test_codes_are_the_rules_codes():
    game = compiled("leduc", {})
    codes = infoset_codes(game)
    assert len(np.unique(codes)) == game.num_infosets
    fast = fast_game(game.rules)
    state = np.zeros(fast.width, np.int64)
    h = int(game.infoset_history[5])
    replay(fast.initial, fast.player, fast.num_children, fast.child, fast.data, game.parent, game.action, h, state, np.empty(fast.width, np.int64), np.empty(4, np.int64))
    assert fast.infoset_code(fast.data, state) == codes[5]


def test_unknown_code_is_an_error_unless_uniform_is_asked_for():
    game = compiled("goofspiel", {"cards": 4})
    full = CodePolicy.from_policy(rcfr.Policy.random(game, 5))
    # drop one set of each player
    codes = infoset_codes(game)
    drop = [int(np.searchsorted(full.codes, codes[np.flatnonzero(game.infoset_player == p)[-1]])) for p in (0, 1)]
    keep = np.setdiff1d(np.arange(full.num_infosets), drop)
    rows = [full.probs[full.first[i]:full.first[i + 1]] for i in keep]
    first = np.concatenate(([0], np.cumsum([len(r) for r in rows])))
    partial = CodePolicy(game.rules, full.codes[keep], first, np.concatenate(rows))
    with pytest.raises(ValueError, match="not in the policy.*default='uniform'"):
        rules_eval.exploitability(game.rules, partial)
    with pytest.raises(PolicyError, match="not in this code policy"):
        partial.to_policy(game)
    as_compiled = partial.to_policy(game, default="uniform")
    assert_same(game, as_compiled, partial, default="uniform")
    with pytest.raises(ValueError, match="default must be None .* or 'uniform'"):
        rules_eval.exploitability(game.rules, partial, default="zero")


def test_wrong_game_is_refused(tmp_path):
    leduc, kuhn = compiled("leduc", {}), compiled("kuhn", {})
    policy = CodePolicy.from_policy(rcfr.Policy.uniform(leduc))
    with pytest.raises(ValueError, match=r"belongs to the game leduc\(.*not to kuhn\("):
        rules_eval.exploitability(kuhn.rules, policy)
    with pytest.raises(ValueError, match=r"belongs to the game leduc\(.*not to kuhn\("):
        policy.to_policy(kuhn)
    other = rcfr.make_rules("leduc", ante=2)
    with pytest.raises(ValueError, match=r"not to leduc\(.*ante=2"):
        rules_eval.expected_value(other, policy)
    path = tmp_path / "leduc.npz"
    policy.save(path)
    with pytest.raises(PolicyError, match=rf"code policy file {path} belongs to the game leduc\(.*not to kuhn\("):
        CodePolicy.load(kuhn.rules, path)


def test_save_and_load(tmp_path):
    game = compiled("leduc", {})
    policy = CodePolicy.from_policy(rcfr.Policy.random(game, 7))
    for dtype in (np.float64, np.float32):
        path = tmp_path / f"p{np.dtype(dtype).itemsize}.npz"
        policy.astype(dtype).save(path)
        back = CodePolicy.load(game.rules, path)
        assert back.probs.dtype == dtype and back.fingerprint == policy.fingerprint
        for field in ("codes", "first"):
            assert np.array_equal(getattr(back, field), getattr(policy, field))
        assert np.array_equal(back.probs, policy.probs.astype(dtype))
    assert not [p.name for p in tmp_path.iterdir() if p.suffix == ".tmp"]  # atomic: no leftovers
    with pytest.raises(ValueError, match="suffix must be .npz"):
        policy.save(tmp_path / "p.json")
    (tmp_path / "broken.npz").write_bytes(b"PK\x03\x04 not really")
    with pytest.raises(PolicyError, match="not a readable .npz code policy"):
        CodePolicy.load(game.rules, tmp_path / "broken.npz")
    np.savez(tmp_path / "odd.npz", probs=np.zeros(3))
    with pytest.raises(PolicyError, match="missing"):
        CodePolicy.load(game.rules, tmp_path / "odd.npz")


def test_float32_probabilities_cost_little():
    """float32 halves the probabilities' memory; the exploitability moves by ~1e-7 chips (rows sum to 1
    only to float32's precision). Measured, not a contract: the bound is loose."""
    for name, params in (("leduc", {}), ("goofspiel", {"cards": 4})):
        game = compiled(name, params)
        policy = CodePolicy.from_policy(rcfr.Policy.random(game, 11))
        exact = rules_eval.exploitability(game.rules, policy)
        single = rules_eval.exploitability(game.rules, policy.astype(np.float32))
        assert abs(single - exact) < 1e-5


def test_malformed_policies_are_refused():
    game = compiled("kuhn", {})
    rules = game.rules
    good = CodePolicy.from_policy(rcfr.Policy.uniform(game))
    codes, first, probs = good.codes, good.first, good.probs
    with pytest.raises(ValueError, match="'probs' must be a 1-D float64 or float32"):
        CodePolicy(rules, codes, first, probs.astype(np.float16))
    with pytest.raises(ValueError, match="'codes' must be non-negative and strictly increasing"):
        CodePolicy(rules, codes[::-1].copy(), first, probs)
    with pytest.raises(ValueError, match="'first' must hold"):
        CodePolicy(rules, codes, first[:-1], probs)
    bad = probs.copy()
    bad[0] = 0.9
    with pytest.raises(PolicyError, match="sum to"):
        CodePolicy(rules, codes, first, bad)
    bad[0] = -0.5
    with pytest.raises(PolicyError, match="not a finite non-negative"):
        CodePolicy(rules, codes, first, bad)
    # a row with another number of actions than the rules give
    wide = CodePolicy(rules, codes, np.concatenate((first[:1], first[1:] + 1)),
                      np.concatenate(([1 / 3, 1 / 3, 1 / 3], probs[2:])))
    with pytest.raises(ValueError, match="the policy has 3 actions, the rules 2"):
        rules_eval.expected_value(rules, wide)
    with pytest.raises(PolicyError, match="the code policy has 3 actions, the game 2"):
        wide.to_policy(game)
    with pytest.raises(ValueError, match="player must be 0 or 1"):
        rules_eval.best_response_value(rules, good, 2)
    with pytest.raises(ValueError, match="unit must be 'chips' or 'mbb'"):
        rules_eval.exploitability(rules, good, unit="bb")
    with pytest.raises(TypeError, match="policy must be a CodePolicy"):
        rules_eval.expected_value(rules, {"J||": [0.5, 0.5]})


def test_rules_without_a_fast_path_are_refused():
    rules = rcfr.make_rules("dieroll", faces=2, skew=0.5)
    with pytest.raises(ValueError, match="has no fast path"):
        rules_eval.exploitability(rules, CodePolicy(rules, [0], [0, 2], [0.5, 0.5]))


class _ForgetfulKuhn(rcfr.games.poker.Kuhn):
    """Kuhn whose codes say only who acts: player 0's first and second decisions share a set, which
    player 0 reaches after different own sequences (imperfect recall)."""

    def fast(self):
        spec = super().fast()
        who = spec.player

        @njit
        def code(data, s):
            return who(data, s)

        return spec._replace(infoset_code=code, code_space=2)


def test_imperfect_recall_is_refused():
    rules = _ForgetfulKuhn()
    policy = CodePolicy(rules, [0, 1], [0, 2, 4], [0.5] * 4)
    with pytest.raises(ValueError, match="code 0, reached after different own sequences"):
        rules_eval.exploitability(rules, policy)
