"""Vanilla CFR's nodes_touched against a brute-force pruned tree walk over the compiled game."""

from __future__ import annotations

import sys

import pytest

import rcfr
from rcfr.games import TERMINAL


def pruned_walk(game, player: int, opponent_strategy) -> int:
    """Histories a recursive CFR walk updating `player` visits, stopping below histories the opponent
    reaches with probability zero."""
    opponent = 1 - player
    offset = game.views[opponent].offset

    def visit(h: int, reach: float) -> int:
        count = 1
        if reach == 0.0 or game.player[h] == TERMINAL:
            return count
        for a in range(game.num_children[h]):
            child = game.first_child[h] + a
            q = reach
            if game.player[h] == opponent:
                q *= opponent_strategy[game.infoset_first_seq[game.infoset[h]] + a - offset + 1]
            count += visit(child, q)
        return count

    sys.setrecursionlimit(10_000)
    return visit(0, 1.0)


@pytest.mark.parametrize("name, params, updates", [("kuhn", {}, "alternating"), ("leduc", {}, "alternating"),
                                                    ("leduc", {}, "simultaneous"),
                                                    ("pam", {"horizon": 1, "graph": "circle"}, "alternating")])
def test_cfr_nodes_touched_matches_a_pruned_walk(name, params, updates):
    game = rcfr.load_game(name, **params)
    solver = rcfr.make_solver("cfr", game, updates=updates)
    assert solver.nodes_touched == 0
    pruned_some = False
    for skip in (0, 5, 5, 5):
        solver.run(skip)
        before = solver.nodes_touched
        strategies = [solver.store.strategy(p).copy() for p in (0, 1)]
        expected = pruned_walk(game, 0, strategies[1])
        solver.run(1)
        after_first = solver.store.strategy(0) if updates == "alternating" else strategies[0]
        expected += pruned_walk(game, 1, after_first)
        assert solver.nodes_touched - before == expected
        if skip == 0:  # the first walk meets uniform strategies: nothing to prune
            assert expected - pruned_walk(game, 1, after_first) == game.num_histories
        pruned_some |= expected < 2 * game.num_histories
    assert pruned_some  # regret matching put zeros somewhere: the test exercised pruning


def test_nodes_touched_survives_a_checkpoint():
    game = rcfr.load_game("kuhn")
    solver = rcfr.make_solver("cfr", game).run(7)
    again = rcfr.make_solver("cfr", game)
    again.load_state_dict(solver.state_dict())
    assert again.nodes_touched == solver.nodes_touched > 0
