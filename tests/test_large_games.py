"""Princess and Monster and Latent Tic-Tac-Toe: sizes against independent counts, and their rules."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

import rcfr
from rcfr.games import CHANCE, TERMINAL

GRID = {0: [1, 3], 1: [0, 2, 4], 2: [1, 5], 3: [0, 4, 6], 4: [1, 3, 5, 7], 5: [2, 4, 8], 6: [3, 7], 7: [4, 6, 8],
        8: [5, 7]}
CIRCLE = {n: [(n - 1) % 8, (n + 1) % 8] for n in range(8)}


def pam_counts(adjacency: dict, horizon: int, starts) -> tuple[int, int, int]:
    """(histories, terminals, information sets) by a recursion over (monster node, princess node, moves)
    and, for information sets, walk counts with matrix powers."""
    moves = 2 * horizon + 1

    @lru_cache(None)
    def below(m, p, made):  # (histories, terminals) in the subtree of this decision or terminal node
        if (made > 0 and m == p) or made == moves:
            return 1, 1
        total, ends = 1, 0
        here = m if made % 2 == 0 else p
        for n in adjacency[here] + [here]:
            h, z = below(n, p, made + 1) if made % 2 == 0 else below(m, n, made + 1)
            total, ends = total + h, ends + z
        return total, ends

    if starts is None:  # random: a chance node for the monster, one per monster node for the princess
        n = len(adjacency)
        parts = [below(m, p, 0) for m in range(n) for p in range(n)]
        histories, terminals = 1 + n + sum(h for h, _ in parts), sum(z for _, z in parts)
        first = np.ones(n)
    else:
        histories, terminals = below(*starts, 0)
        first = np.eye(len(adjacency))[starts[0]], np.eye(len(adjacency))[starts[1]]
    step = np.eye(len(adjacency))
    for a, near in adjacency.items():
        step[a, near] = 1
    infosets = 0
    for player, own_moves in ((0, horizon + 1), (1, horizon)):
        start = first if starts is None else first[player]
        infosets += sum(int(start @ np.linalg.matrix_power(step, k) @ np.ones(len(adjacency)))
                        for k in range(own_moves))
    return histories, terminals, infosets


@pytest.mark.parametrize("params, adjacency, starts", [
    ({"horizon": 2}, GRID, None),
    ({"horizon": 1}, GRID, None),
    ({"horizon": 3, "graph": "circle"}, CIRCLE, None),
    ({"horizon": 4, "graph": "circle", "starts": "opposite"}, CIRCLE, (0, 4)),
    ({"horizon": 3, "starts": "opposite"}, GRID, (0, 8)),
])
def test_pam_sizes_match_an_independent_count(params, adjacency, starts):
    game = rcfr.load_game("pam", cache=False, **params)
    histories, terminals, infosets = pam_counts(adjacency, params["horizon"], starts)
    assert (game.num_histories, game.num_terminals, game.num_infosets) == (histories, terminals, infosets)


def test_pam_paper_instance_size_by_independent_count():
    """The rules' t_max = 5 on the grid is the 2009 paper's game: 91.8e6 histories, 13 moves deep."""
    histories, _, infosets = pam_counts(GRID, 5, None)
    assert histories == 91_803_132 and infosets == 11_923
    assert rcfr.make_rules("pam").moves + 2 == 13


def test_pam_payoffs_and_keys():
    rules = rcfr.make_rules("pam", horizon=2)
    s = rules.next_state(rules.next_state(rules.initial_state(), 4), 1)  # monster on 4, princess on 1
    assert rules.player(s) == 0 and rules.infoset_key(s) == "M:4" and rules.actions(s) == ["1", "3", "4", "5", "7"]
    caught = rules.next_state(s, 0)  # the monster moves onto the princess at t = 0
    assert rules.player(caught) == TERMINAL and rules.utility(caught) == 3.0  # t_max - t + 1
    s = rules.next_state(s, 2)  # monster stays on 4
    assert rules.infoset_key(s) == "P:1" and rules.actions(s) == ["0", "1", "2", "4"]
    walked_in = rules.next_state(s, 3)  # the princess walks into the monster at t = 0
    assert rules.player(walked_in) == TERMINAL and rules.utility(walked_in) == 3.0
    s = rules.next_state(s, 0)  # princess to 0; t = 1
    assert rules.infoset_key(s) == "M:4 4"
    s = rules.next_state(rules.next_state(s, 0), 1)  # monster to 1, princess to 1: caught at t = 1
    assert rules.player(s) == TERMINAL and rules.utility(s) == 2.0
    game = rcfr.load_game("pam", horizon=1, graph="circle", starts="opposite", cache=False)
    escaped = np.flatnonzero((game.player == TERMINAL) & (game.depth == 3))
    assert escaped.size and set(game.utility[escaped]) == {-1.0}  # 4 apart: three moves cannot catch
    assert rcfr.make_rules("pam").chance_outcomes(rcfr.make_rules("pam").initial_state())[0] == ("m0", 1 / 9)


def test_pam_small_instance_solves():
    game = rcfr.load_game("pam", horizon=2, graph="circle")
    policy = rcfr.make_solver("cfr+", game).run(300).average_policy()
    result = rcfr.evaluate(game, policy)
    assert result.exploitability < 0.02
    assert game.player[0] == CHANCE


LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def latent_counts(opening: tuple) -> tuple[int, int, int]:
    """(histories, terminals, information sets) of Latent Tic-Tac-Toe by a recursion over the board
    and the pending moves; an information set is the move list without the opponent's pending move.
    A decision with one empty square left is forced: neither a history nor an information set."""
    board0 = [0] * 9
    for i, q in enumerate(opening):
        board0[q] = i % 2 + 1
    first = len(opening) % 2
    infosets = set()

    def visit(board, pending, player, moves):
        board = list(board)
        if pending[player] is not None and board[pending[player]] == 0:
            board[pending[player]] = player + 1
            if any(all(board[i] == player + 1 for i in line) for line in LINES):
                return 1, 1
        if 0 not in board:
            return 1, 1
        forced = board.count(0) == 1
        if not forced:
            infosets.add((player, moves[:-1]))
        total, ends = 0 if forced else 1, 0
        for q in range(9):
            if board[q] == 0:
                nxt = list(pending)
                nxt[player] = q
                h, z = visit(board, nxt, 1 - player, moves + (q,))
                total, ends = total + h, ends + z
        return total, ends

    histories, terminals = visit(board0, [None, None], first, ())
    return histories, terminals, len(infosets)


@pytest.mark.parametrize("opening", [(4, 0, 8, 2), (4, 0, 8), (0, 1, 4, 8)])
def test_latent_ttt_sizes_match_an_independent_count(opening):
    game = rcfr.load_game("latent_ttt", opening=opening, cache=False)
    assert (game.num_histories, game.num_terminals, game.num_infosets) == latent_counts(opening)


def test_latent_ttt_rules():
    rules = rcfr.make_rules("latent_ttt", opening=(4, 0, 8, 2))  # X on 4 and 8, O on 0 and 2; X to move
    s = rules.initial_state()
    assert rules.player(s) == 0 and rules.infoset_key(s) == "X:" and rules.actions(s) == ["1", "3", "5", "6", "7"]
    s = rules.next_state(s, 0)  # X writes 1 (not yet on the board)
    assert rules.player(s) == 1 and s.board[1] == 0 and rules.actions(s) == ["1", "3", "5", "6", "7"]
    assert rules.infoset_key(s) == "O:"  # O does not know X's move
    s = rules.next_state(s, 0)  # O writes 1 too; X's move is revealed and takes square 1
    assert s.board[1] == 1 and rules.infoset_key(s) == "X:1" and rules.player(s) == 0
    s = rules.next_state(s, 1)  # X writes 5; O's move on 1 is revealed and lost
    assert s.board.count(2) == 2 and rules.infoset_key(s) == "O:1 1" and "1" not in rules.actions(s)
    s = rules.next_state(s, rules.actions(s).index("6"))  # O writes 6; X's 5 is revealed: 3-4-5? no, 4-5 only
    assert s.board[5] == 1 and rules.player(s) == 0
    s = rules.next_state(s, rules.actions(s).index("3"))  # X writes 3; O's 6 revealed: 0-?-6, 2-4-6 has X on 4
    assert s.board[6] == 2 and rules.player(s) == 1
    s = rules.next_state(s, rules.actions(s).index("7"))  # O writes 7; X's 3 revealed: 3-4-5 is X's line
    assert rules.player(s) == TERMINAL and rules.utility(s) == 1.0
    with pytest.raises(ValueError, match="'opening'"):
        rcfr.make_rules("latent_ttt", opening=(0, 3, 1, 4, 2))  # X already has a line
    with pytest.raises(ValueError, match="'opening'"):
        rcfr.make_rules("latent_ttt", opening=(0, 0))


def test_latent_ttt_small_instance_solves():
    game = rcfr.load_game("latent_ttt", opening=(4, 0, 8, 2))
    policy = rcfr.make_solver("cfr+", game).run(200).average_policy()
    assert rcfr.evaluate(game, policy).exploitability < 0.02


@pytest.mark.parametrize("order, points", [("descending", (3, 2, 1)), ("ascending", (1, 2, 3))])
def test_goofspiel_points_order(order, points):
    rules = rcfr.make_rules("goofspiel", cards=3, returns="points", points_order=order)
    assert rules.points == points
    s = rules.initial_state()
    for a in (0, 2, 1, 1, 0, 0):  # bids (1 vs 3), (3 vs 2), (2 vs 1): player 1 wins turn 1, player 0 turns 2, 3
        s = rules.next_state(s, a)
    assert rules.player(s) == TERMINAL
    assert rules.utility(s) == points[1] + points[2] - points[0]


def test_goofspiel_random_points_order_follows_the_seed():
    orders = {rcfr.make_rules("goofspiel", cards=5, points_order="random", seed=seed).points for seed in range(6)}
    assert len(orders) > 1 and all(sorted(o) == [1, 2, 3, 4, 5] for o in orders)
    again = rcfr.make_rules("goofspiel", cards=5, points_order="random", seed=3)
    assert again.points == rcfr.make_rules("goofspiel", cards=5, points_order="random", seed=3).points
    a = rcfr.load_game("goofspiel", cards=3, returns="points", points_order="ascending", cache=False)
    d = rcfr.load_game("goofspiel", cards=3, returns="points", cache=False)
    assert a.num_infosets == d.num_infosets and not np.array_equal(a.utility, d.utility)
    assert a.fingerprint != d.fingerprint
    with pytest.raises(ValueError, match="points_order"):
        rcfr.make_rules("goofspiel", points_order="shuffled")
