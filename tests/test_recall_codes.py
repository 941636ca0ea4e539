"""Recall abstractions built from the fast state (`rcfr.sources.abstraction.abstract_codes`): each equals an
abstraction built from readable keys by an independent rule, depends only on what the player knows,
and is solved by a sampled solver."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import rcfr
from rcfr.abstraction import make_abstraction
from rcfr.abstraction.base import Abstraction


def _by_keys(game, key):
    """The abstraction merging sets of equal ``key(infoset, state)``, through `Abstraction.from_keys`."""
    states = game.states(game.infoset_history)
    keys = {str(game.infoset_key(i)): repr(key(i, states[int(h)])) for i, h in enumerate(game.infoset_history)}
    return Abstraction.from_keys(game, "by keys", keys.__getitem__)


def test_bluff_last_bids_equals_the_key_rule():
    """(Sizes at several r: tests/test_abstraction_recall.py.)"""
    game, r = rcfr.load_game("liars_dice"), 3
    expected = _by_keys(game, lambda i, s: (s.dice[len(s.bids) % 2], s.bids[-r:]))
    np.testing.assert_array_equal(make_abstraction(game, "bluff_last_bids", r=r).infoset_map, expected.infoset_map)


@pytest.mark.parametrize("params, lead, rs", [({"cards": 5}, "exact", range(5)), ({"cards": 5}, "sign", range(5)),
                                              ({"cards": 5}, "none", range(5)),
                                              ({"cards": 4, "points_order": "random", "seed": 3}, "exact", range(4))])
def test_goofspiel_last_turns_equals_the_key_rule(params, lead, rs):
    """Key ``p:own bids|results``: the hand is the cards not bid, the lead the points won minus lost."""
    game = rcfr.load_game("goofspiel", **params)
    points = game.rules.points
    sizes = []
    for r in rs:
        def key(i, s):
            bids, results = str(game.infoset_key(i)).split(":")[1].split("|")
            bids = [int(b) for b in bids.split()]
            score = sum(points[t] * {"W": 1, "T": 0, "L": -1}[x] for t, x in enumerate(results))
            kept = {"exact": score, "sign": np.sign(score), "none": 0}[lead]
            hand = sorted(set(range(1, params["cards"] + 1)) - set(bids))
            return hand, kept, list(zip(bids, results))[max(len(bids) - r, 0):] if r else []
        abstraction = make_abstraction(game, "goofspiel_last_turns", r=r, lead=lead)
        np.testing.assert_array_equal(abstraction.infoset_map, _by_keys(game, key).infoset_map)
        sizes.append(abstraction.num_sequences)
    assert sizes == sorted(sizes) and sizes[0] < game.num_sequences
    if rs[-1] == params["cards"] - 1:
        assert sizes[-1] == game.num_sequences  # all turns remembered: the full game


def test_latent_ttt_last_moves_equals_the_key_rule():
    game = rcfr.load_game("latent_ttt", opening=(4, 0, 8))
    sizes = []
    for r in range(0, 6):
        expected = _by_keys(game, lambda i, s: (s.board, s.moves[:-1][max(len(s.moves) - 1 - r, 0):] if r else ()))
        abstraction = make_abstraction(game, "latent_ttt_last_moves", r=r)
        np.testing.assert_array_equal(abstraction.infoset_map, expected.infoset_map)
        sizes.append(abstraction.num_sequences)
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1] == game.num_sequences


@pytest.mark.parametrize("name, game_name, params", [
    ("bluff_last_bids", "liars_dice", {"r": 3}),
    ("goofspiel_last_turns", "goofspiel", {"r": 1}),
    ("latent_ttt_last_moves", "latent_ttt", {"r": 1})])
def test_codes_depend_only_on_what_the_player_knows(name, game_name, params):
    """The same map from a random history of each information set instead of its first one."""
    game = rcfr.load_game(game_name, **({"cards": 5} if game_name == "goofspiel" else
                                        {"opening": (4, 0, 8)} if game_name == "latent_ttt" else {}))
    decisions = np.flatnonzero(game.player >= 0)
    chosen = np.full(game.num_infosets, -1, np.int64)
    chosen[game.infoset[decisions]] = decisions  # the last history of each set
    other = copy.copy(game)
    other.__dict__["infoset_history"] = chosen
    assert not np.array_equal(chosen, game.infoset_history)
    np.testing.assert_array_equal(make_abstraction(other, name, **params).infoset_map,
                                  make_abstraction(game, name, **params).infoset_map)


def test_a_merge_of_different_actions_is_caught_by_the_signature():
    """Negative control: keying Goofspiel by the turn alone merges hands of equal size (equal action
    counts, different cards): the hand signature rejects it, as the action names do."""
    game = rcfr.load_game("goofspiel", cards=4)
    hand = make_abstraction(game, "goofspiel_last_turns", r=0).action_signature
    turn = game.infoset_num_actions.astype(np.int64)
    with pytest.raises(ValueError, match="differ in player or legal actions"):
        Abstraction.from_codes(game, "turn", turn, hand)
    player_turn = np.unique(turn * 2 + game.infoset_player, return_inverse=True)[1].reshape(-1)
    with pytest.raises(ValueError, match="differ in player or legal actions"):
        Abstraction(game, "turn", player_turn, np.array([str(k) for k in range(player_turn.max() + 1)]))


def test_es_mccfr_solves_goofspiel_with_a_recall_abstraction():
    game = rcfr.load_game("goofspiel", cards=5)
    abstraction = make_abstraction(game, "goofspiel_last_turns", r=1)
    assert abstraction.num_sequences < game.num_sequences
    solver = rcfr.make_solver("es-mccfr", game, abstraction=abstraction, seed=0).run(3000)
    uniform = rcfr.exploitability(game, rcfr.make_solver("es-mccfr", game, seed=0).average_policy())
    assert rcfr.exploitability(game, solver.average_policy()) < 0.5 * uniform


def test_bad_options_name_the_field():
    goofspiel = rcfr.load_game("goofspiel", cards=4)
    with pytest.raises(ValueError, match=r"r \(turns remembered\) must be an integer in \[0, 3\], got 4"):
        make_abstraction(goofspiel, "goofspiel_last_turns", r=4)
    with pytest.raises(ValueError, match="unknown goofspiel_last_turns lead 'rough'; allowed: exact, sign, none"):
        make_abstraction(goofspiel, "goofspiel_last_turns", lead="rough")
    with pytest.raises(ValueError, match=r"r \(moves remembered\) must be an integer in \[0, 14\], got -1"):
        make_abstraction(rcfr.load_game("latent_ttt", opening=(4, 0, 8)), "latent_ttt_last_moves", r=-1)
    with pytest.raises(ValueError, match="needs a 'latent_ttt' game"):
        make_abstraction(goofspiel, "latent_ttt_last_moves")
