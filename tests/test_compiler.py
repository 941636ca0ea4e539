"""The compiler: the fast path equals the rule-object path, forced moves collapse exactly, sizes are
known before work, and the cache cannot serve another game's arrays."""

from __future__ import annotations

import itertools
import shutil

import numpy as np
import pytest
from brute import RandomGame, walk_value

import rcfr
from rcfr import budget, tree
from rcfr.games.base import CHANCE, TERMINAL, GameRules
from rcfr.games.fast import fast_function
from rcfr.policy import Policy

FAST_GAMES = [
    ("kuhn", {}),
    ("ocp", {"cards": 2}),
    ("ocp", {"cards": 6}),
    ("leduc", {}),
    ("leduc", {"merge_suits": True}),
    ("leduc", {"ranks": 4, "suits": 1, "bets": (1, 2, 4), "max_raises": 2}),
    ("leduc", {"ranks": 2, "suits": 3, "ante": 2, "bets": (3,), "max_raises": 0}),
    ("nlocp", {}),
    ("nlocp", {"cards": 3, "stack": 7, "ante": 2}),
]


def assert_same_game(a, b):
    for name, x in a.arrays().items():
        y = getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    assert list(a.infoset_keys) == list(b.infoset_keys)
    assert list(a.action_names) == list(b.action_names)


@pytest.mark.parametrize("name, params", FAST_GAMES)
def test_fast_path_equals_rule_path(name, params):
    rules = rcfr.make_rules(name, **params)
    assert rules.fast() is not None
    slow = tree.compile_game(rules, fast=False)
    fast = tree.compile_game(rules)
    assert "infoset_keys" not in fast.__dict__  # names are replayed from the rules, not stored
    assert_same_game(slow, fast)
    assert list(slow.chance_outcome_names) == list(fast.chance_outcome_names)
    assert rules.estimate_histories() == fast.num_histories  # exact before any work
    i = fast.num_infosets - 1
    assert fast.infoset_key(i) == slow.infoset_keys[i] and fast.actions_of(i) == slow.actions_of(i)
    h = fast.num_histories - 1
    assert fast.history_string(h) == slow.history_string(h)


@fast_function("infoset_code")
def _one_set(data, s):
    return 0


@fast_function("infoset_code")
def _out_of_range(data, s):
    return 1 << 40


@pytest.mark.parametrize("code, message", [(_one_set, "disagrees with its information set"),
                                           (_out_of_range, r"code outside \[0, code_space\)")])
def test_wrong_infoset_code_is_an_error(code, message):
    rules = rcfr.make_rules("kuhn")
    broken = rules.fast()._replace(infoset_code=code)
    rules.fast = lambda: broken
    with pytest.raises(ValueError, match=message + ".*infoset_code is wrong"):
        tree.compile_game(rules)


def test_fingerprint_covers_the_fast_path_module():
    import rcfr.games.poker_fast as poker_fast

    assert poker_fast in tree.fingerprint._source_modules(type(rcfr.make_rules("leduc")))


# ---- forced moves ------------------------------------------------------------------------------------
class Padded(GameRules):
    """`inner` with a forced move before every node: a one-action decision by the player about to act,
    or a one-outcome chance node."""

    name = "padded"

    def __init__(self, inner: GameRules):
        self.inner = inner

    def initial_state(self):
        return (self.inner.initial_state(), False)

    def player(self, s):
        return self.inner.player(s[0])

    def actions(self, s):
        return self.inner.actions(s[0]) if s[1] else ["wait"]

    def chance_outcomes(self, s):
        return self.inner.chance_outcomes(s[0]) if s[1] else [("nothing", 1.0)]

    def next_state(self, s, a):
        return (self.inner.next_state(s[0], a), False) if s[1] else (s[0], True)

    def utility(self, s):
        return self.inner.utility(s[0])

    def infoset_key(self, s):
        return self.inner.infoset_key(s[0]) if s[1] else "wait " + self.inner.infoset_key(s[0])


@pytest.mark.parametrize("inner", [rcfr.make_rules("kuhn"), RandomGame(seed=3, depth=4), RandomGame(seed=8, depth=5)])
def test_forced_moves_collapse_exactly(inner):
    """Padding a game with forced moves everywhere compiles to the very same game."""
    assert_same_game(tree.compile_game(inner, fast=False), tree.compile_game(Padded(inner)))


def _raw_action_counts(rules, state=None, found=None) -> dict[str, int]:
    """Every information-set key of the uncollapsed rules (forced moves included) -> its action count."""
    state = rules.initial_state() if state is None else state
    found = {} if found is None else found
    who = rules.player(state)
    if who == TERMINAL:
        return found
    n = len(rules.chance_outcomes(state)) if who == CHANCE else len(rules.actions(state))
    if who != CHANCE:
        found[rules.infoset_key(state)] = n
    for a in range(n):
        _raw_action_counts(rules, rules.next_state(state, a), found)
    return found


def test_goofspiel_forced_bids_keep_values_and_exploitability():
    """Brute force on the uncollapsed rules (forced last bids included) against the compiled game."""
    game = rcfr.load_game("goofspiel", cards=3, returns="points")
    uniform_rows = {key: [1.0 / n] * n for key, n in _raw_action_counts(game.rules).items()}
    assert len(uniform_rows) > game.num_infosets  # the forced bids are sets of the raw rules only
    uniform = Policy.uniform(game)
    assert rcfr.expected_value(game, uniform) == pytest.approx(walk_value(game.rules, uniform_rows), abs=1e-12)
    best = []
    for p in (0, 1):
        mine = [k for k, q in zip(game.infoset_keys, game.infoset_player) if q == p]
        sign = 1.0 if p == 0 else -1.0
        top = -np.inf
        for pure in itertools.product(*(range(len(uniform_rows[k])) for k in mine)):
            rows = dict(uniform_rows)
            for key, a in zip(mine, pure):
                rows[key] = [1.0 if b == a else 0.0 for b in range(len(rows[key]))]
            top = max(top, sign * walk_value(game.rules, rows))
        best.append(top)
    assert rcfr.nash_conv(game, uniform) == pytest.approx(best[0] + best[1], abs=1e-9)


# ---- size before work ------------------------------------------------------------------------------
def test_too_large_fails_before_any_work(no_enumeration):
    with pytest.raises(ValueError, match=r"more than 1,000 histories.*9,457 histories \(estimated\), about .* GiB"):
        tree.compile_game(rcfr.make_rules("leduc"), max_histories=1000)
    with pytest.raises(ValueError, match=r"nlocp\(cards=13, stack=50, ante=1\) has more than .* histories "
                                         r"\(estimated\).* GiB available"):
        rcfr.load_game("nlocp", cards=13, stack=50, cache=False)  # the default limit: available memory


def test_default_limit_follows_available_memory(monkeypatch):
    monkeypatch.delenv("RCFR_MAX_HISTORIES", raising=False)
    monkeypatch.setattr(budget, "available_memory", lambda: 120 * 1000)
    assert tree.max_histories() == 1000
    monkeypatch.setenv("RCFR_MAX_HISTORIES", "77")
    assert tree.max_histories() == 77 and tree.max_histories(5) == 5


@pytest.mark.parametrize("name, params", [("goofspiel", {"cards": 4}), ("liars_dice", {}),
                                          ("dieroll", {"faces": 3, "bets": (1, 2, 3)}),
                                          ("nlocp", {"cards": 5, "stack": 9, "ante": 2})])
def test_estimates_are_exact(name, params):
    rules = rcfr.make_rules(name, **params)
    assert rules.estimate_histories() == tree.compile_game(rules, fast=False).num_histories


# ---- the cache -------------------------------------------------------------------------------------
def test_cache_file_of_another_game_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("RCFR_CACHE", str(tmp_path))
    kuhn = rcfr.load_game("kuhn")
    leduc = rcfr.load_game("leduc")
    kuhn_file, leduc_file = next(tmp_path.glob("kuhn-*.game")), next(tmp_path.glob("leduc-*.game"))
    shutil.copyfile(kuhn_file, leduc_file)
    again = rcfr.load_game("leduc")
    assert again.num_histories == leduc.num_histories == 9457
    assert_same_game(leduc, again)
    assert tree.open_game(leduc.rules, leduc_file) is not None  # rebuilt in place
    assert tree.open_game(leduc.rules, kuhn_file) is None and tree.open_game(kuhn.rules, kuhn_file) is not None


def test_cached_arrays_are_memory_mapped_copy_on_write(tmp_path, monkeypatch):
    monkeypatch.setenv("RCFR_CACHE", str(tmp_path))
    first = rcfr.load_game("leduc", merge_suits=True)
    again = rcfr.load_game("leduc", merge_suits=True)
    assert isinstance(again.player.base, np.memmap)
    assert_same_game(first, again)
    assert rcfr.exploitability(again, Policy.uniform(again)) == pytest.approx(2.3736, abs=1e-4)
    again.utility[:] = 0.0  # a private copy of the pages: the file is unchanged
    assert_same_game(first, rcfr.load_game("leduc", merge_suits=True))


def test_binary_policy_carries_the_fingerprint(tmp_path):
    leduc, merged = rcfr.load_game("leduc"), rcfr.load_game("leduc", merge_suits=True)
    policy = Policy.random(leduc, seed=1)
    policy.save(tmp_path / "p.npz")
    assert np.array_equal(Policy.load(leduc, tmp_path / "p.npz").probs, policy.probs)
    Policy.random(merged, seed=1).save(tmp_path / "other.npz")
    with pytest.raises(rcfr.PolicyError, match="belongs to the game leduc.*merge_suits=True"):
        Policy.load(leduc, tmp_path / "other.npz")


def test_a_subclass_that_changes_a_rule_method_compiles_by_its_rules():
    """The built-in fast encoder cannot see a subclass's overrides, so such a subclass takes the rule
    path (here a Leduc whose payoffs are negated)."""
    from rcfr.games import Leduc

    class ReversedLeduc(Leduc):
        def utility(self, state):
            return -super().utility(state)

    class RenamedLeduc(Leduc):  # changes no rule method: the fast encoder still speaks for it
        pass

    reversed_game = rcfr.compile_game(ReversedLeduc())
    plain = rcfr.compile_game(Leduc())
    assert np.array_equal(reversed_game.utility, -plain.utility)
    assert tree.enumeration._speaks_for(RenamedLeduc(), "fast") and not tree.enumeration._speaks_for(ReversedLeduc(), "fast")


@pytest.mark.parametrize("name", ["kuhn", "leduc", "goofspiel"])
def test_history_sequences_follow_the_parent_chain(name):
    """The compiled history-sequence pass against a walk up each history's parents."""
    game = rcfr.load_game(name) if name != "goofspiel" else rcfr.load_game(name, cards=4)
    seqs = game.history_sequences
    for h in range(0, game.num_histories, max(1, game.num_histories // 500)):
        expected, child, up = [-1, -1], h, game.parent[h]
        while up >= 0:
            p = game.player[up]
            if p >= 0 and expected[p] < 0:
                expected[p] = game.infoset_first_seq[game.infoset[up]] + game.action[child]
            child, up = up, game.parent[up]
        assert seqs[h].tolist() == expected
