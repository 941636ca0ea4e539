"""Action abstraction of no-limit one-card poker and its translation into the full game."""

from __future__ import annotations

import numpy as np
import pytest

import rcfr
from rcfr.abstraction import (
    ACTION_ABSTRACTIONS,
    NoLimitWagers,
    action_abstraction,
    parse_wagers,
    read_wager,
    solve_action_abstraction,
    translate,
)
from rcfr.abstraction.action import replay_own
from rcfr.games.base import CHANCE, TERMINAL


@pytest.fixture(scope="module")
def nlocp():
    return rcfr.load_game("nlocp")


@pytest.fixture(scope="module")
def small():
    return rcfr.load_game("nlocp", cards=3, stack=6)


def _state(rules, history):
    s = rules.next_state(rules.next_state(rules.initial_state(), 0), 0)
    for name in history:
        s = rules.next_state(s, rules.actions(s).index(name))
    return s


# null: per card c / r10 at the root, c / r10 after a check, f / c facing all-in (twice): 4 sets x 2 actions.
@pytest.mark.parametrize("wagers, sequences", [("null", 32), ("P", 128), ("HP", 368), ("PD", 176), ("HPD", 416)])
def test_sizes(nlocp, wagers, sequences):
    game = action_abstraction(nlocp, wagers)
    assert game.num_sequences == sequences
    assert game.rules.description() == f"nlocp_wagers(cards=4, stack=10, ante=1, wagers={wagers!r})"
    assert rcfr.load_game("nlocp_wagers", wagers=wagers).num_sequences == sequences


def test_abstract_wagers_are_rounded_pot_fractions(nlocp):
    rules = action_abstraction(nlocp, "HPD").rules
    assert rules.actions(_state(rules, [])) == ["c", "r2", "r3", "r5", "r10"]  # pot 2: +1, +2, +4
    # facing r3 (pot after calling 6, minimum raise to 5): H -> 6, P -> 9, D -> 15, beyond the stack
    assert rules.actions(_state(rules, ["r3"])) == ["f", "c", "r6", "r9", "r10"]
    assert rules.actions(_state(rules, ["r2"])) == ["f", "c", "r4", "r6", "r10"]
    null = action_abstraction(nlocp, "null").rules
    assert null.actions(_state(null, ["c"])) == ["c", "r10"]
    assert null.actions(_state(null, ["r10"])) == ["f", "c"]
    full = set(nlocp.action_names.tolist())
    assert set(action_abstraction(nlocp, "HPD").action_names.tolist()) <= full


def test_geometric_reading(nlocp):
    rules = action_abstraction(nlocp, "P").rules
    root = _state(rules, [])
    options = rules.actions(root)  # c, r3 (pot fraction 1), r10 (all-in: fraction 4.5)
    # r4 is a 1.5-pot bet: similarity 1/1.5 to the pot bet and 1.5/4.5 to all-in
    read = dict(read_wager(root, 4, root, options, 10))
    assert read == pytest.approx({"r3": 2 / 3, "r10": 1 / 3})
    assert read_wager(root, 2, root, options, 10) == [("r3", 1.0)]  # below the smallest
    assert read_wager(root, 3, root, options, 10) == [("r3", 1.0)]
    assert read_wager(root, 10, root, options, 10) == [("r10", 1.0)]
    # sizes are pot fractions, each on its own pot: a real r2 is read as r3 (pot 2 -> abstract pot 6)
    real, abstract = _state(nlocp.rules, ["r2"]), _state(rules, ["r3"])
    options = rules.actions(abstract)  # f, c, r9 (a pot raise: fraction 1), r10 (all-in: fraction 7/6)
    assert options == ["f", "c", "r9", "r10"]
    assert read_wager(real, 6, abstract, options, 10) == [("r9", 1.0)]  # (6 - 2) / 4: a pot raise
    assert read_wager(real, 5, abstract, options, 10) == [("r9", 1.0)]  # 0.75 pot: below the smallest
    assert read_wager(real, 7, abstract, options, 10) == [("r10", 1.0)]  # 1.25 pot: above the largest
    # a deep stack: a real raise to 4 (1.5 pot) lies between the pot raise r3 and the double-pot raise r5
    deep = NoLimitWagers(stack=40, wagers="HPD")  # rules only: the full game would be huge
    root = _state(deep, [])
    assert deep.actions(root) == ["c", "r2", "r3", "r5", "r40"]
    similarity = {"r3": 1 / 1.5, "r5": 1.5 / 2}  # 2/3 and 3/4: probabilities 8/17 and 9/17
    assert dict(read_wager(root, 4, root, deep.actions(root), 40)) == pytest.approx({"r3": 8 / 17, "r5": 9 / 17})
    assert similarity["r3"] / sum(similarity.values()) == pytest.approx(8 / 17)


def test_readings_are_always_wagers(nlocp):
    """Every real raise is read as abstract raises (never check/call or fold), probabilities summing to 1,
    whether the real and abstract states agree or differ."""
    pairs = [([], []), (["c"], ["c"]), (["r3"], ["r3"]), (["r4"], ["r3"]), (["c", "r4"], ["c", "r3"]),
             (["r2"], ["r3"]), (["c", "r2"], ["c", "r5"])]
    for wagers in ACTION_ABSTRACTIONS:
        rules = action_abstraction(nlocp, wagers).rules
        for real_history, abstract_history in pairs:
            try:
                abstract = _state(rules, abstract_history)
            except ValueError:  # a wager this abstraction does not have
                continue
            real = _state(nlocp.rules, real_history)
            options = rules.actions(abstract)
            for name in nlocp.rules.actions(real):
                if name[0] == "r" and rules.player(abstract) >= 0:
                    read = read_wager(real, int(name[1:]), abstract, options, 10)
                    assert all(a[0] == "r" and a in options for a, _ in read)
                    assert sum(q for _, q in read) == pytest.approx(1.0)


def _plan_constraints(game, policy):
    for p in (0, 1):
        view = game.views[p]
        plan = view.plan(policy.local(p))
        sums = np.add.reduceat(plan[1:], view.infoset_first - 1)
        np.testing.assert_allclose(sums, plan[view.infoset_parent], atol=1e-12)


@pytest.mark.parametrize("wagers", ACTION_ABSTRACTIONS)
def test_translated_policies_are_valid(small, wagers):
    abstract = action_abstraction(small, wagers)
    policy = translate(small, abstract, rcfr.Policy.random(abstract, seed=1))
    assert np.all(policy.probs >= 0)
    np.testing.assert_allclose(np.add.reduceat(policy.probs, small.infoset_first_seq), 1.0)
    rcfr.Policy.from_dict(small, policy.to_dict())  # passes the strict validation of the JSON format
    _plan_constraints(small, policy)
    assert 0 <= rcfr.exploitability(small, policy)


def test_translation_of_the_full_game_is_the_identity(small):
    policy = rcfr.Policy.random(small, seed=3)
    np.testing.assert_allclose(translate(small, small, policy).probs, policy.probs, atol=1e-12)


def test_histories_inside_the_abstraction_keep_the_abstract_policy(small):
    abstract = action_abstraction(small, "HP")
    policy = rcfr.Policy.random(abstract, seed=2)
    translated = translate(small, abstract, policy)
    checked = 0
    for key in abstract.infoset_keys:
        row = policy[str(key)]
        full_row = translated[str(key)]
        assert {a: full_row[a] for a in row} == pytest.approx(row, abs=1e-12)
        assert sum(full_row[a] for a in full_row if a not in row) == pytest.approx(0.0, abs=1e-12)
        checked += 1
    assert checked == abstract.num_infosets


def _mixture_value(game, abstract, policy, player, opponent):
    """Brute force: player 0's expected payoff when `player` draws each reading once per hand (branching
    over every reading and deal), plays the abstract `policy` on the read history and `opponent` plays
    the full-game policy `opponent`."""
    rules, arules = game.rules, abstract.rules

    def value(real, read, reach):
        who = rules.player(real)
        if who == TERMINAL:
            return reach * rules.utility(real)
        if who == CHANCE:
            outcomes = rules.chance_outcomes(real)
            return sum(value(rules.next_state(real, i), read, reach * q) for i, (_, q) in enumerate(outcomes))
        if read.cards != real.cards:
            read = read._replace(cards=real.cards)
        options = rules.actions(real)
        if who == player:
            row = policy[arules.infoset_key(read)]
            total = 0.0
            for j, name in enumerate(arules.actions(read)):
                real_name = replay_own(real, read, name, options, rules.stack)
                total += value(rules.next_state(real, options.index(real_name)), arules.next_state(read, j),
                               reach * row[name])
            return total
        row = opponent[rules.infoset_key(real)]
        total = 0.0
        for i, name in enumerate(options):
            aoptions = arules.actions(read)
            readings = [(name, 1.0)] if name[0] != "r" else read_wager(real, int(name[1:]), read, aoptions, rules.stack)
            for aname, q in readings:
                total += value(rules.next_state(real, i), arules.next_state(read, aoptions.index(aname)),
                               reach * row[name] * q)
        return total

    return value(rules.initial_state(), arules.initial_state(), 1.0)


@pytest.mark.parametrize("wagers", ["P", "HPD"])
def test_translation_is_the_mixture_over_consistent_readings(wagers):
    game = rcfr.load_game("nlocp", cards=3, stack=5)
    abstract = action_abstraction(game, wagers)
    policy = rcfr.Policy.random(abstract, seed=5)
    translated = translate(game, abstract, policy)
    opponent = rcfr.Policy.random(game, seed=6)
    for player in (0, 1):
        mixed = opponent.probs.copy()
        view = game.views[player]
        mine = slice(view.offset, view.offset + view.num_sequences - 1)
        mixed[mine] = translated.probs[mine]
        exact = rcfr.expected_value(game, rcfr.Policy(game, mixed))
        assert exact == pytest.approx(_mixture_value(game, abstract, policy, player, opponent), abs=1e-12)


def test_abstractions_are_not_better_than_the_full_game(nlocp):
    full = rcfr.exploitability(nlocp, rcfr.make_solver("cfr+", nlocp).run(300).average_policy())
    for wagers in ACTION_ABSTRACTIONS:
        translated = solve_action_abstraction(nlocp, wagers, iterations=300)
        assert rcfr.exploitability(nlocp, translated) > full + 0.01


def test_errors(nlocp):
    for bad in ("", "PH", "X", "HH", None):
        with pytest.raises(ValueError, match="'null' or letters of 'HPD'"):
            parse_wagers(bad)
    with pytest.raises(ValueError, match="no-limit"):
        action_abstraction(rcfr.load_game("kuhn"), "P")
    other = rcfr.load_game("nlocp", cards=3)
    with pytest.raises(ValueError, match="does not abstract"):
        translate(nlocp, action_abstraction(other, "P"), rcfr.Policy.uniform(action_abstraction(other, "P")))
