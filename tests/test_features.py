"""Sequence features: shapes, registry errors, and exact card/betting facts on small games."""

import re

import numpy as np
import pytest

import rcfr
from rcfr import features
from rcfr.features import Features, feature_matrix, make_features, register_features
from rcfr.features.poker import PAIR_FIELDS


def row(game, feats, key, action):
    i = game.infoset_index[key]
    a = game.actions_of(i).index(action)
    return dict(zip(feats.names, feats.matrix[game.infoset_first_seq[i] + a]))


@pytest.mark.parametrize("name,params", [("kuhn", {}), ("ocp", {"cards": 5}), ("leduc", {"merge_suits": True}),
                                         ("nlocp", {"cards": 3, "stack": 5})])
@pytest.mark.parametrize("kind", ["indicator", "generic", "poker"])
def test_every_extractor_gives_one_distinct_row_per_sequence(name, params, kind):
    game = rcfr.load_game(name, **params)
    feats = feature_matrix(game, kind)
    assert feats.matrix.shape == (game.num_sequences, len(feats.names))
    assert np.all(np.isfinite(feats.matrix))
    assert len(np.unique(feats.matrix, axis=0)) == game.num_sequences
    assert feature_matrix(game, kind) is feats  # computed once per game
    assert not feats.matrix.flags.writeable


def test_indicator_is_the_identity(kuhn):
    assert np.array_equal(feature_matrix(kuhn, "indicator").matrix, np.eye(kuhn.num_sequences))


def test_kuhn_hand_strength_and_betting_pairs(kuhn):
    feats = feature_matrix(kuhn, "poker")
    for card, strength in (("J", 0.0), ("Q", 0.5), ("K", 1.0)):
        assert row(kuhn, feats, f"{card}||", "c")["hand_strength"] == strength
    r = row(kuhn, feats, "Q||cr", "c")  # player 1 calls a bet after checking
    assert (r["a0.player1"], r["a0.call"], r["a0.pot"], r["a0.stack"]) == (1, 1, 4, 0)
    assert (r["a1.player2"], r["a1.wager_chips"], r["a1.wager_pot_fraction"]) == (1, 1, 0.5)
    assert (r["a2.player1"], r["a2.call"], r["a2.pot"]) == (1, 1, 2)


def test_leduc_hand_strength_is_exact_and_suit_free(leduc):
    feats = feature_matrix(leduc, "poker")
    # a pair of kings cannot lose; J on a Q board ties only the other J (1 of 4 opponent cards)
    assert row(leduc, feats, "Kh|Ks|cc/", "c")["hand_strength"] == 1.0
    assert row(leduc, feats, "Jh|Qs|cc/", "c")["hand_strength"] == pytest.approx(0.125)
    assert row(leduc, feats, "Jh|Qs|cc/", "c")["board_rank"] == 2
    assert row(leduc, feats, "Jh||", "c")["board_rank"] == 0
    # before the board, K: opponent K (1/5) ties unless the board pairs someone ...; check vs brute force
    deck = leduc.rules.deck
    wins = []
    for opp in range(6):
        for board in range(6):
            if len({5, opp, board}) == 3:
                wins.append((deck.showdown((5, opp, board)) + 1) / 2)
    assert row(leduc, feats, "Ks||", "r")["hand_strength"] == pytest.approx(np.mean(wins))
    # suits never matter: the suited game has exactly as many distinct rows as the rank-only one
    assert len(np.unique(feats.matrix, axis=0)) == rcfr.load_game("leduc", merge_suits=True).num_sequences


def test_no_limit_wager_fractions():
    game = rcfr.load_game("nlocp")  # 4 cards, stack 10, ante 1
    feats = feature_matrix(game, "poker")
    r = row(game, feats, "K||", "r5")
    assert (r["a0.pot"], r["a0.stack"], r["a0.wager_chips"]) == (6, 5, 4)
    assert r["a0.wager_pot_fraction"] == 2.0 and r["a0.wager_stack_fraction"] == pytest.approx(4 / 9)
    assert (r["a0.wager"], r["a0.all_in"]) == (1, 0)
    r = row(game, feats, "K||r5", "r10")
    assert (r["a0.all_in"], r["a0.stack"], r["a0.player2"], r["a1.player1"]) == (1, 0, 1, 1)
    assert r["a0.wager_chips"] == 5 and r["a0.wager_stack_fraction"] == 1.0
    longest = max(len(re.findall(r"[fc]|r\d+", k.split("|")[2])) for k in game.infoset_keys)
    assert len(feats.names) == 2 + len(PAIR_FIELDS) * (1 + longest)


def test_generic_features_see_own_card_but_not_the_opponents(leduc):
    feats = feature_matrix(leduc, "generic")
    r = row(leduc, feats, "Qh||c", "r")  # player 1 holds Qh
    own = [v for k, v in r.items() if k.startswith("step2=")]
    hidden = [v for k, v in r.items() if k.startswith("step1=")]
    assert sorted(own)[-1] == 1.0 and sum(own) == 1.0
    assert max(hidden) == pytest.approx(0.2) and sum(hidden) == pytest.approx(1.0)
    assert r["player1"] == 1 and r["action=r"] == 1 and r["step3=p0:c"] == 1


def test_registry_errors_and_custom_extractors(kuhn):
    with pytest.raises(ValueError, match="unknown features 'nope'; allowed: generic, goofspiel, indicator"):
        feature_matrix(kuhn, "nope")
    with pytest.raises(ValueError, match="unknown option.*'scale'.*features 'poker'"):
        feature_matrix(kuhn, "poker", scale=2)
    register_features("depth", lambda game, scale=1.0: Features(
        scale * game.depth[np.zeros(game.num_sequences, int)][:, None] + np.arange(game.num_sequences)[:, None],
        ("x",)))
    try:
        assert feature_matrix(kuhn, "depth", scale=2.0).matrix.shape == (kuhn.num_sequences, 1)
        assert make_features(kuhn, {"name": "depth"}).names == ("x",)
    finally:
        del features.FEATURES["depth"]
    assert make_features(kuhn).names[0] == "hand_strength"  # auto = poker for poker rules
    with pytest.raises(ValueError, match="rows"):
        make_features(kuhn, np.zeros((3, 2)))
    with pytest.raises(ValueError, match="need poker rules"):
        from rcfr.features.poker import make

        class Fake:
            rules = type("R", (), {"name": "dice"})()
        make(Fake())


class HiddenPennies(rcfr.GameRules):
    """Player 0 hides heads or tails (after a public coin flip that doubles the stakes); player 1 guesses."""

    name = "hidden_pennies"

    def initial_state(self):
        return ()

    def player(self, s):
        return -1 if len(s) == 0 else (len(s) - 1 if len(s) < 3 else -2)

    def actions(self, s):
        return ["H", "T"]

    def chance_outcomes(self, s):
        return [("x1", 0.5), ("x2", 0.5)]

    def next_state(self, s, a):
        return s + (a,)

    def utility(self, s):
        return (1 + s[0]) * (1.0 if s[1] != s[2] else -1.0)

    def infoset_key(self, s):
        return f"p{len(s) - 1}|stake{s[0]}"  # player 1 does not see player 0's move


def test_generic_features_and_rcfr_on_a_non_poker_game():
    game = rcfr.compile_game(HiddenPennies())
    feats = make_features(game)  # auto: generic for non-poker rules
    assert feats.names[0].startswith("step") and feats.matrix.shape == (game.num_sequences, len(feats.names))
    r = row(game, feats, "p1|stake1", "H")  # player 1 sees the stake but not player 0's move
    assert r["step1=x2"] == 1 and r["step2=p0:H"] == 0.5 and r["step2=p0:T"] == 0.5 and r["player1"] == 1
    solver = rcfr.make_solver("rcfr+", game, regressor={"name": "best_first", "max_leaves": 4}).run(200)
    assert rcfr.exploitability(game, solver.average_policy()) < 0.05


def test_poker_history_keeps_the_most_recent_pairs(kuhn):
    from rcfr.features import make_features
    short = make_features(kuhn, "poker", history=2)
    full = feature_matrix(kuhn, "poker")
    assert short.num_features == 2 + 2 * len(PAIR_FIELDS)
    assert np.array_equal(short.matrix, full.matrix[:, :short.num_features])
    with pytest.raises(ValueError, match="history must be None or an integer >= 1"):
        make_features(kuhn, "poker", history=0)
