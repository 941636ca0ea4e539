"""Game rules and compiled trees: sizes from REFERENCE.md, rule details, the cache, bad input."""

import numpy as np
import pytest

import rcfr
from rcfr.games.base import CHANCE, TERMINAL


@pytest.mark.parametrize("name, params, histories, infosets, sequences", [
    ("kuhn", {}, 58, 12, 24),
    ("ocp", {"cards": 3}, 58, 12, 24),
    ("leduc", {}, 9457, 936, 2184),
    ("leduc", {"merge_suits": True}, 9457, 288, 672),
])
def test_reference_sizes(name, params, histories, infosets, sequences):
    game = rcfr.load_game(name, **params)
    assert (game.num_histories, game.num_infosets, game.num_sequences) == (histories, infosets, sequences)
    assert sum(game.infosets_per_player) == infosets
    assert sum(game.sequences_per_player) == sequences


def test_tree_arrays_are_consistent():
    game = rcfr.load_game("leduc")
    kids = np.flatnonzero(game.parent >= 0)
    # breadth-first: parents first, children contiguous and in action order
    assert np.all(game.parent[kids] < kids)
    assert np.all(game.first_child[game.parent[kids]] + game.action[kids] == kids)
    assert np.all(np.diff(game.depth) >= 0)
    decisions = game.player >= 0
    assert np.all(game.num_children[decisions] == game.infoset_num_actions[game.infoset[decisions]])
    assert np.all((game.player == TERMINAL) == (game.num_children == 0))
    # chance probabilities at each chance node sum to one
    chance = np.flatnonzero(game.player == CHANCE)
    sums = np.bincount(game.parent[kids], game.chance_prob[kids], minlength=game.num_histories)
    assert np.allclose(sums[chance], 1.0)
    # chance reach over terminals sums to the number of betting paths: 4 folds in round 1, and
    # 5 ways into round 2 times its 4 folds + 5 showdowns
    assert np.isclose(game.chance_reach[game.player == TERMINAL].sum(), 4 + 5 * 9)


def test_readable_keys_and_actions():
    kuhn = rcfr.load_game("kuhn")
    assert set(kuhn.infoset_keys) == {f"{c}||{h}" for c in "JQK" for h in ("", "c", "r", "cr")}
    assert kuhn.actions_of(kuhn.infoset_index["K||r"]) == ["f", "c"]
    leduc = rcfr.load_game("leduc")
    assert "Qh|Ks|rc/r" in leduc.infoset_index
    assert leduc.actions_of(leduc.infoset_index["Qh|Ks|rc/r"]) == ["f", "c", "r"]
    assert leduc.actions_of(leduc.infoset_index["Qh|Ks|rc/rr"]) == ["f", "c"]  # one bet and one raise
    merged = rcfr.load_game("leduc", merge_suits=True)
    assert "Q|K|rc/r" in merged.infoset_index
    nl = rcfr.load_game("nlocp")
    assert nl.actions_of(nl.infoset_index["K||"]) == ["c"] + [f"r{t}" for t in range(2, 11)]


def _terminal_utility(game, path):
    """Utility after following `path` (outcome or action names) from the root."""
    h = 0
    for name in path:
        kids = range(game.first_child[h], game.first_child[h] + game.num_children[h])
        if game.player[h] == CHANCE:
            h = next(k for k in kids if game.chance_outcome_names[k] == name)
        else:
            h = kids[game.actions_of(game.infoset[h]).index(name)]
    assert game.player[h] == TERMINAL, game.history_string(h)
    return game.utility[h]


def test_leduc_payoffs():
    game = rcfr.load_game("leduc")
    assert _terminal_utility(game, ["Js", "Ks", "c", "c", "Jh", "c", "c"]) == 1  # pair beats king
    assert _terminal_utility(game, ["Js", "Ks", "r", "c", "Qh", "r", "c"]) == -7  # 1 + 2 + 4
    assert _terminal_utility(game, ["Ks", "Kh", "r", "r", "c", "Js", "c", "c"]) == 0  # tie splits
    assert _terminal_utility(game, ["Js", "Ks", "c", "r", "f"]) == -1
    assert _terminal_utility(game, ["Js", "Ks", "c", "r", "r", "f"]) == 3
    assert _terminal_utility(game, ["Qs", "Js", "r", "r", "c", "Kh", "r", "r", "c"]) == 1 + 4 + 8
    assert game.actions_of(game.infoset_index["Qs||rr"]) == ["f", "c"]  # one bet, one raise


def test_nlocp_betting_rules():
    game = rcfr.load_game("nlocp")
    # P0 bets to 3 (increment 2): P1 may fold, call, raise to >= 5, or go all-in
    assert game.actions_of(game.infoset_index["K||r3"]) == ["f", "c"] + [f"r{t}" for t in range(5, 11)]
    # after r3 r8 (increment 5), the minimum raise is 13 > 10: only all-in remains
    assert game.actions_of(game.infoset_index["K||r3r8"]) == ["f", "c", "r10"]
    assert game.actions_of(game.infoset_index["K||r10"]) == ["f", "c"]
    assert _terminal_utility(game, ["K", "Q", "r4", "c"]) == 4
    assert _terminal_utility(game, ["K", "Q", "c", "r4", "f"]) == -1
    assert _terminal_utility(game, ["K", "Q", "c", "c"]) == 1


def test_load_game_errors_name_allowed_values():
    with pytest.raises(ValueError, match="unknown game .holdem.; allowed: (.*, )?kuhn, (.*, )?leduc, (.*, )?nlocp"):
        rcfr.load_game("holdem")
    with pytest.raises(ValueError, match="'stacks'.*allowed: cards, stack, ante"):
        rcfr.load_game("nlocp", stacks=20)
    with pytest.raises(ValueError, match="'suits' must be an integer"):
        rcfr.load_game("leduc", suits=0)
    with pytest.raises(ValueError, match="merge_suits"):
        rcfr.load_game("leduc", merge_suits="yes")


def test_parameterized_leduc_compiles():
    game = rcfr.load_game("leduc", ranks=4, suits=3, max_raises=2, bets=(1, 3))
    assert game.num_infosets > 936
    assert "Kd|Qs|rrrc/" in game.infoset_index


def test_cache_roundtrip(tmp_path, monkeypatch):
    monkeypatch.setenv("RCFR_CACHE", str(tmp_path))
    first = rcfr.load_game("kuhn")
    files = list(tmp_path.glob("kuhn-*.game"))
    assert len(files) == 1
    again = rcfr.load_game("kuhn")
    for name, array in first.arrays().items():
        assert np.array_equal(array, getattr(again, name)), name
    monkeypatch.setenv("RCFR_CACHE", "off")
    rcfr.load_game("ocp", cards=4)
    assert not list(tmp_path.glob("ocp-*.game"))
    monkeypatch.setenv("RCFR_CACHE", str(tmp_path))
    rcfr.load_game("ocp", cards=4, cache=False)
    assert not list(tmp_path.glob("ocp-*.game"))


def test_damaged_cache_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("RCFR_CACHE", str(tmp_path))
    rcfr.load_game("kuhn")
    path = next(tmp_path.glob("kuhn-*.game"))
    path.write_bytes(b"not a zip file")
    assert rcfr.load_game("kuhn").num_histories == 58


def test_imperfect_recall_is_rejected():
    class Forgetful(rcfr.GameRules):
        name = "forgetful"

        def initial_state(self):
            return ()

        def player(self, s):
            return TERMINAL if len(s) == 2 else 0

        def actions(self, s):
            return ["a", "b"]

        def next_state(self, s, a):
            return s + (a,)

        def utility(self, s):
            return float(sum(s))

        def infoset_key(self, s):
            return "start" if not s else "later"  # forgets its first move

    with pytest.raises(ValueError, match="imperfect recall"):
        rcfr.compile_game(Forgetful())
