"""Phantom Tic-Tac-Toe's evaluation over its players' prebuilt sets equals the general rules walk and the
compiled path (value, both best responses, histories), for uniform, random, partial and abstract policies."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rcfr
from rcfr.abstraction import make_abstraction
from rcfr.evaluation import phantom as pe
from rcfr.evaluation import rules as rules_eval
from rcfr.experiments.metrics import evaluate_policy
from rcfr.games.phantom import PhantomTicTacToe, phantom_counts
from rcfr.games.phantom_fast import FORGET, forget_code
from rcfr.games.phantom_sizes import phantom_infosets
from rcfr.policy.rules import CodePolicy

OPENINGS = [(4, 0, 8, 1), (0, 4, 8, 2), (4, 0, 8)]  # 3,355 to 138,517 histories
EMPTY = (np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0))


def rules_of(opening):
    return rcfr.make_rules("phantom_ttt", opening=opening)


def assert_equal_walks(rules, policy, default=None, workers=None):
    ours = pe.walk(rules, policy, default, workers)
    theirs = rules_eval.walk(rules, policy, default)
    for field in ("value", "br0", "br1"):
        assert ours[field] == pytest.approx(theirs[field], abs=1e-12), field
    assert ours["histories"] == theirs["histories"] == phantom_counts(rules.opening)[0]
    return ours


@pytest.mark.parametrize("opening", OPENINGS)
def test_uniform_and_random_policies_equal_the_general_walk(opening):
    rules = rules_of(opening)
    raw = assert_equal_walks(rules, CodePolicy(rules, *EMPTY), "uniform")
    assert raw["infosets"] == raw["defaulted"] == sum(phantom_infosets(opening)[0])
    for seed in (0, 1):
        assert_equal_walks(rules, pe.phantom_policy(rules, "random", seed=seed))


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), drop=st.floats(0.0, 1.0))
def test_compiled_random_policies_and_partial_ones(seed, drop):
    """Random policies of the compiled game (whose codes the compiled tree gives) and the same with a part
    of the sets dropped (played uniformly): equal to the compiled evaluation and to the general walk."""
    game = rcfr.load_game("phantom_ttt", opening=(4, 0, 8, 1))
    policy = rcfr.Policy.random(game, seed)
    full = CodePolicy.from_policy(policy)
    expected = rcfr.evaluate(game, policy)
    got = pe.evaluate(game.rules, full)
    assert got.value == pytest.approx(expected.value, abs=1e-12)
    assert got.best_response_values == pytest.approx(expected.best_response_values, abs=1e-12)
    keep = np.random.default_rng(seed).random(full.num_infosets) >= drop
    sizes = np.diff(full.first)[keep]
    partial = CodePolicy(game.rules, full.codes[keep], np.concatenate([[0], np.cumsum(sizes)]),
                         full.probs[np.repeat(keep, np.diff(full.first))])
    assert assert_equal_walks(game.rules, partial, "uniform")["defaulted"] == int((~keep).sum())


def test_whole_policies_are_the_compiled_sets():
    game = rcfr.load_game("phantom_ttt", opening=(4, 0, 8))
    built = pe.phantom_policy(game.rules)
    assert np.array_equal(built.codes, np.sort(CodePolicy.from_policy(rcfr.Policy.uniform(game)).codes))
    uniform = rcfr.evaluate(game, rcfr.Policy.uniform(game))
    assert pe.evaluate(game.rules, built).nash_conv == pytest.approx(uniform.nash_conv, abs=1e-12)


def test_negative_control_a_changed_row_changes_the_numbers():
    rules = rules_of((4, 0, 8, 1))
    policy = pe.phantom_policy(rules, "random", seed=5)
    probs = policy.probs.copy()
    row = slice(policy.first[0], policy.first[1])  # X's first set, reached by every history
    probs[row] = probs[row][::-1]
    changed = CodePolicy(rules, policy.codes, policy.first, probs)
    a, b = pe.evaluate(rules, policy), pe.evaluate(rules, changed)
    assert abs(a.value - b.value) > 1e-6 or abs(a.nash_conv - b.nash_conv) > 1e-6
    assert_equal_walks(rules, changed)


@pytest.mark.parametrize("forget", ["fosf", "foi"])
def test_abstract_policies_equal_the_general_walk(forget):
    """A policy with rows per abstract set (the thesis's forgetting abstractions): the best responder
    still tells every set apart."""
    opening = (4, 0, 8)
    rules_game = rcfr.load_game("phantom_ttt", opening=opening, compiled=False)
    abstraction = make_abstraction(rules_game, "phantom_ttt_forget", forget=forget)
    sets = pe.PlayerSets(rules_game.rules)
    sizes = np.diff(sets.first)
    rows = {}
    for i in np.flatnonzero(sizes > 1):
        rows[2 * forget_code(FORGET[forget], sets.code[i]) + sets.owner(i)] = int(sizes[i])
    codes = np.array(sorted(rows), np.int64)
    assert len(codes) < np.count_nonzero(sizes > 1)  # sets were merged
    counts = np.array([rows[c] for c in codes])
    first = np.concatenate([[0], np.cumsum(counts)])
    weights = np.random.default_rng(3).exponential(size=int(first[-1]))
    probs = weights / np.repeat(np.add.reduceat(weights, first[:-1]), counts)
    policy = CodePolicy(rules_game.rules, codes, first, probs, abstraction=abstraction)
    assert_equal_walks(rules_game.rules, policy)


def test_workers_split_the_walk_without_changing_it():
    rules = rules_of((4, 0, 8))
    policy = pe.phantom_policy(rules, "random", seed=2)
    one, two = pe.walk(rules, policy, workers=1), pe.walk(rules, policy, workers=2)
    for field in pe.OUT_FIELDS:
        assert one[field] == pytest.approx(two[field], abs=1e-12)
    assert pe.walk(rules, policy, workers=2) == two  # a fixed order of sums: the same bits again


def test_float32_policy_is_close():
    rules = rules_of((4, 0, 8))
    wide = pe.phantom_policy(rules, "random", seed=4)
    a, b = pe.evaluate(rules, wide), pe.evaluate(rules, wide.astype(np.float32))
    assert a.nash_conv == pytest.approx(b.nash_conv, abs=1e-6)


def test_the_kit_takes_this_walk_for_phantom_and_can_force_the_general_one(monkeypatch):
    game = rcfr.load_game("phantom_ttt", opening=(4, 0, 8, 1), compiled=False)
    policy = pe.phantom_policy(game.rules, "random", seed=1)
    calls = []
    real = pe.walk
    monkeypatch.setattr(pe, "walk", lambda *a, **k: calls.append(1) or real(*a, **k))
    fast = evaluate_policy(game, policy)
    assert calls == [1]
    general = evaluate_policy(game, policy, walk="general")
    assert calls == [1]
    assert fast.exploitability == pytest.approx(general.exploitability, abs=1e-12)
    with pytest.raises(ValueError, match="walk"):
        evaluate_policy(game, policy, walk="fast")


def test_bad_input_is_refused_naming_the_field():
    rules = rules_of((4, 0, 8, 1))
    empty = CodePolicy(rules, *EMPTY)
    with pytest.raises(ValueError, match="not in the policy"):
        pe.evaluate(rules, empty)
    whole = pe.phantom_policy(rules)
    wrong = CodePolicy(rules, whole.codes[:1], [0, 3], [0.2, 0.3, 0.5]) if whole.first[1] != 3 else \
        CodePolicy(rules, whole.codes[:1], [0, 2], [0.5, 0.5])
    with pytest.raises(ValueError, match="actions"):
        pe.evaluate(rules, wrong, default="uniform")
    for workers in (0, 10**6, "2"):
        with pytest.raises(ValueError, match="workers"):
            pe.evaluate(rules, whole, workers=workers)
    with pytest.raises(ValueError, match="default"):
        pe.evaluate(rules, whole, default="zero")
    with pytest.raises(ValueError, match="belongs to the game"):
        pe.evaluate(rules_of((4, 0, 8)), whole)
    with pytest.raises(ValueError, match="kind"):
        pe.phantom_policy(rules, "greedy")
    with pytest.raises(TypeError, match="Phantom"):
        pe.evaluate(rcfr.make_rules("kuhn"), whole)

    class Changed(PhantomTicTacToe):
        def utility(self, s):
            return 0.0

    assert not pe.walks(Changed((4, 0, 8, 1))) and pe.walks(rules)
