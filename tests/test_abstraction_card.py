"""Card abstractions: sizes, the regret-summing store against a compiled abstract game, hand strength."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rcfr
from rcfr.abstraction import (
    Abstraction,
    AbstractRegrets,
    abstract_solver,
    average_policy,
    hand_strength,
    identity,
    make_abstraction,
)
from rcfr.abstraction.card import _buckets
from rcfr.games.base import GameRules
from rcfr.solvers import RegretTable
from rcfr.tree import compile_game


# Leduc (rank game): 6 round-1 decision histories (P0: "", "cr"; P1: "c", "r", "rr"... 6 in all) and
# 5 continuing round-1 histories x 6 round-2 decision histories = 30, so 288 = 3 * 6 + 9 * 30 sets.
# JQK: 1 * 6 + 2 (paired or not) * 30 = 66; J.QK, JQ.K: 2 * 6 + 4 * 30 = 132; J.Q.K: 3 * 6 + 6 * 30 = 198.
@pytest.mark.parametrize("name, infosets, sequences", [
    ("ranks", 288, 672), ("JQK", 66, 154), ("J.QK", 132, 308), ("JQ.K", 132, 308), ("J.Q.K", 198, 462)])
@pytest.mark.parametrize("merge_suits", [False, True])
def test_named_leduc_sizes(name, infosets, sequences, merge_suits):
    game = rcfr.load_game("leduc", merge_suits=merge_suits)
    abstraction = make_abstraction(game, name)
    assert (abstraction.num_infosets, abstraction.num_sequences) == (infosets, sequences)
    assert abstraction.fraction_of() == pytest.approx(sequences / game.num_sequences)
    assert AbstractRegrets(RegretTable(), abstraction).size() == sequences


def test_identity_store_reproduces_the_solver_exactly(leduc):
    plain = rcfr.make_solver("cfr+", leduc).run(50)
    tied = abstract_solver("cfr+", leduc, identity(leduc)).run(50)
    np.testing.assert_array_equal(plain.average_policy().probs, tied.average_policy().probs)


def test_lossless_abstraction_reaches_the_full_game_solution(leduc, leduc_ranks):
    """Forgetting suits on the suited game is the rank game: the same iterates (up to rounding, which
    regret-matching+ amplifies over many iterations) and the same solution."""
    abstraction = make_abstraction(leduc, "ranks")
    early = [rcfr.exploitability(leduc, abstract_solver("cfr+", leduc, abstraction).run(60).average_policy()),
             rcfr.exploitability(leduc_ranks, rcfr.make_solver("cfr+", leduc_ranks).run(60).average_policy())]
    assert early[0] == pytest.approx(early[1], rel=1e-9)
    abstract = abstract_solver("cfr+", leduc, abstraction).run(1000)
    rank_game = rcfr.make_solver("cfr+", leduc_ranks).run(1000)
    full = rcfr.evaluate(leduc, abstract.average_policy())
    ranks = rcfr.evaluate(leduc_ranks, rank_game.average_policy())
    assert full.exploitability == pytest.approx(ranks.exploitability, rel=0.02)
    assert full.exploitability < 1e-3
    assert full.value == pytest.approx(-0.0856, abs=2e-3)
    tied = rcfr.evaluate(leduc, average_policy(abstract, "abstract"))
    assert tied.exploitability == pytest.approx(full.exploitability, rel=1e-9)


class _Relabelled(GameRules):
    """The same rules with the abstraction's keys: the abstract game compiled on its own."""

    def __init__(self, game: rcfr.Game, abstraction: Abstraction):
        self.rules, self.game, self.abstraction = game.rules, game, abstraction
        self.name = f"abstract-{game.name}"

    def params(self):
        return {}

    def __getattr__(self, name):
        return getattr(self.rules, name)

    def initial_state(self):
        return self.rules.initial_state()

    def player(self, s):
        return self.rules.player(s)

    def actions(self, s):
        return self.rules.actions(s)

    def chance_outcomes(self, s):
        return self.rules.chance_outcomes(s)

    def next_state(self, s, a):
        return self.rules.next_state(s, a)

    def utility(self, s):
        return self.rules.utility(s)

    def infoset_key(self, s):
        i = self.game.infoset_index[self.rules.infoset_key(s)]
        return str(self.abstraction.abstract_keys[self.abstraction.infoset_map[i]])


@pytest.mark.parametrize("name", ["J.QK", "JQK", "ehs-perfect"])
def test_summed_regrets_equal_the_compiled_abstract_game(leduc_ranks, name):
    """A perfect-recall abstraction solved through the store equals CFR+ on the abstract game itself."""
    game = leduc_ranks
    abstraction = (make_abstraction(game, "ehs", buckets=2) if name == "ehs-perfect"
                   else make_abstraction(game, name))
    compiled = compile_game(_Relabelled(game, abstraction))
    assert compiled.num_sequences == abstraction.num_sequences
    direct = rcfr.make_solver("cfr+", compiled).run(60).average_policy()
    stored = abstract_solver("cfr+", game, abstraction).run(60)
    for average_space in ("full", "abstract"):
        policy = average_policy(stored, average_space)
        for i, key in enumerate(game.infoset_keys):
            abstract_key = str(abstraction.abstract_keys[abstraction.infoset_map[i]])
            assert policy[str(key)] == pytest.approx(direct[abstract_key], abs=1e-9)


def test_imperfect_recall_averaging(leduc):
    abstraction = make_abstraction(leduc, "ehs", buckets=3, recall="imperfect")
    assert abstraction.num_infosets < make_abstraction(leduc, "ehs", buckets=3).num_infosets
    with pytest.raises(ValueError, match="imperfect recall"):
        compile_game(_Relabelled(leduc, abstraction))  # the abstract game itself cannot be compiled
    solver = abstract_solver("cfr+", leduc, abstraction).run(300)
    full, tied = average_policy(solver, "full"), average_policy(solver, "abstract")
    def rows(policy):
        return np.add.reduceat(policy.probs, leduc.infoset_first_seq)
    for policy in (full, tied, solver.current_policy()):
        np.testing.assert_allclose(rows(policy), 1.0)
    # abstract averaging ties merged sets; full averaging need not
    seq_abstract = abstraction.infoset_map[leduc.sequence_infoset]
    offset = np.arange(leduc.num_sequences) - leduc.infoset_first_seq[leduc.sequence_infoset]
    for policy, tied_rows in ((tied, True), (solver.current_policy(), True), (full, False)):
        spread = 0.0
        for a in range(abstraction.num_infosets):
            for j in range(3):
                values = policy.probs[(seq_abstract == a) & (offset == j)]
                spread = max(spread, np.ptp(values) if values.size else 0.0)
        assert (spread < 1e-12) == tied_rows
    for policy in (full, tied):
        assert rcfr.exploitability(leduc, policy) > 0.01


def test_checkpoint_resumes_the_same_run(leduc, tmp_path):
    abstraction = make_abstraction(leduc, "ehs", buckets=2, recall="imperfect")
    straight = abstract_solver("cfr+", leduc, abstraction).run(40)
    first = abstract_solver("cfr+", leduc, abstraction).run(25)
    resumed = abstract_solver("cfr+", leduc, abstraction)
    resumed.load_state_dict(first.state_dict())
    resumed.run(15)
    np.testing.assert_array_equal(resumed.average_policy().probs, straight.average_policy().probs)
    np.testing.assert_array_equal(resumed.current_policy().probs, straight.current_policy().probs)
    abstraction.save(tmp_path / "abstraction.json")
    exported = json.loads((tmp_path / "abstraction.json").read_text())["infosets"]
    assert len(exported) == leduc.num_infosets and len(set(exported.values())) == abstraction.num_infosets


def test_coarser_abstractions_are_not_better_than_the_full_game(leduc):
    full = rcfr.exploitability(leduc, rcfr.make_solver("cfr+", leduc).run(1000).average_policy())
    scores = {}
    for name in ("JQK", "J.QK", "JQ.K", "J.Q.K"):
        solver = abstract_solver("cfr+", leduc, make_abstraction(leduc, name)).run(1000)
        scores[name] = rcfr.exploitability(leduc, solver.average_policy())
        assert scores[name] > full + 0.05
    assert scores["JQK"] == max(scores.values())


def test_hand_strength_known_values(leduc, leduc_ranks):
    kuhn = rcfr.load_game("kuhn")
    hs = hand_strength(kuhn)
    assert dict(zip(kuhn.infoset_keys[:3], hs.ehs[:3])) == {"J||": 0.0, "Q||": 0.5, "K||": 1.0}
    np.testing.assert_array_equal(hs.ehs ** 2, hs.ehs2)
    for game in (leduc, leduc_ranks):
        hs = hand_strength(game)
        table = {str(k): (e, e2) for k, e, e2 in zip(game.infoset_keys, hs.ehs, hs.ehs2)}
        first = {"J": (0.3, 0.2125), "Q": (0.5, 0.3625), "K": (0.7, 0.5125)}  # J: 1/5 pair + 4/5 * 1/8
        for card, values in first.items():
            key = next(k for k in table if k.startswith(card) and k.split("|")[1] == "")
            assert table[key] == pytest.approx(values)
        # J on a Q board: only the opponent's J ties (1/8 of 4); K on a Q board: J, J win, K ties (2.5/4)
        assert table[next(k for k in table if k.startswith("J") and k.split("|")[1][:1] == "Q")][0] == 0.125
        assert table[next(k for k in table if k.startswith("K") and k.split("|")[1][:1] == "Q")][0] == 0.625
        assert set(hs.round.tolist()) == {0, 1}


def test_hand_strength_brute_force():
    """Leduc with 4 ranks x 2 suits: explicit loops over opponent cards and boards."""
    game = rcfr.load_game("leduc", ranks=4, suits=2)
    hs = hand_strength(game)
    deck = game.rules.deck

    def strength(me, board):
        rest = [c for c in range(deck.size) if c not in (me, board)]
        total = 0.0
        for opp in rest:
            result = deck.showdown((me, opp, board))
            total += 1.0 if result > 0 else 0.5 if result == 0 else 0.0
        return total / len(rest)

    for i, key in enumerate(game.infoset_keys):
        private, board, _ = str(key).split("|")
        me = next(c for c in range(deck.size) if deck.name(c) == private)
        if board:
            b = next(c for c in range(deck.size) if deck.name(c) == board)
            assert hs.ehs[i] == pytest.approx(strength(me, b)) and hs.ehs2[i] == pytest.approx(strength(me, b) ** 2)
        else:
            values = [strength(me, b) for b in range(deck.size) if b != me]
            assert hs.ehs[i] == pytest.approx(np.mean(values))
            assert hs.ehs2[i] == pytest.approx(np.mean(np.square(values)))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 12), min_size=1, max_size=40), st.integers(1, 6),
       st.sampled_from(["kmeans", "percentile"]))
def test_buckets_are_ordered_and_bounded(raw, k, method):
    values = np.array(raw, dtype=float) / 12
    weights = np.ones(len(values)) + np.arange(len(values)) % 3
    labels = _buckets(values, weights, k, method, seed=0)
    assert labels.min() == 0 and labels.max() < min(k, len(set(raw)))
    assert len(set(labels.tolist())) == min(k, len(set(raw))) or method == "percentile"
    order = np.argsort(values, kind="stable")
    assert np.all(np.diff(labels[order]) >= 0)  # monotone in the value
    for v in set(raw):
        assert len(set(labels[np.array(raw) == v].tolist())) == 1


@pytest.mark.parametrize("buckets, infosets", [(1, 36), (3, 228)])
def test_ehs_bucket_counts(leduc, buckets, infosets):
    """One bucket per round knows no card (6 + 30 sets); with 3 buckets round 1 splits by rank (3 * 6)
    and round 2 by its 3 strengths given the round-1 bucket (7 of the 9 pairs occur: 7 * 30)."""
    for method in ("kmeans", "percentile"):
        abstraction = make_abstraction(leduc, "ehs", buckets=buckets, method=method)
        assert abstraction.num_infosets == infosets


def test_errors_name_the_field(leduc):
    with pytest.raises(ValueError, match="allowed: identity, ranks, ehs, ehs2"):
        make_abstraction(leduc, "suits")
    with pytest.raises(ValueError, match="exactly once"):
        make_abstraction(leduc, "J.Q")
    with pytest.raises(ValueError, match="unknown option"):
        make_abstraction(leduc, "ehs", bukets=3)
    with pytest.raises(ValueError, match="recall"):
        make_abstraction(leduc, "ehs", recall="some")
    with pytest.raises(ValueError, match="buckets"):
        make_abstraction(leduc, "ehs", buckets=(3,))
    with pytest.raises(ValueError, match="card abstractions need a poker game"):
        make_abstraction(_FakeGame(), "ranks")
    with pytest.raises(ValueError, match="differ in player or legal actions"):
        Abstraction.from_keys(leduc, "bad", lambda key: key.split("|")[2][:1])
    with pytest.raises(ValueError, match="was built for"):
        abstract_solver("cfr+", rcfr.load_game("leduc", merge_suits=True), make_abstraction(leduc, "JQK"))


class _FakeGame:
    rules = object()
    name = "fake"
