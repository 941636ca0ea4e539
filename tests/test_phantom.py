"""Phantom Tic-Tac-Toe: the rules, sizes against an independent brute force, and the full game refused
before any work (its fast path against the rule path: tests/test_fast_games.py, on `SMALL`)."""

from __future__ import annotations

import numpy as np
import pytest

import rcfr
from rcfr.games import TERMINAL

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]
SMALL = [(4, 0, 8, 2, 6), (4, 0, 8, 2), (0, 1, 4, 8), (4, 0, 8)]


def brute_force(opening: tuple, collapse: bool = True) -> tuple[int, int, tuple, tuple]:
    """(histories, terminals, information sets per player, (set, action) pairs per player) by walking
    every play; a set is the player's own tries with their results. A decision with one square left to
    try is forced: neither a history nor a set when `collapse`."""
    board = [0] * 9
    for i, q in enumerate(opening):
        board[q] = i % 2 + 1
    sets = [{}, {}]
    histories = terminals = 0

    def walk(board, tries, p):
        nonlocal histories, terminals
        if any(board[a] == board[b] == board[c] != 0 for a, b, c in LINES) or 0 not in board:
            histories += 1
            terminals += 1
            return
        tried = [q for q, _ in tries[p]]
        legal = [q for q in range(9) if q not in tried and q not in opening]
        if len(legal) > 1 or not collapse:
            histories += 1
            sets[p][tuple(tries[p])] = len(legal)
        for q in legal:
            mine = list(tries)
            if board[q]:
                mine[p] = tries[p] + [(q, False)]
                walk(board, mine, p)
            else:
                mine[p] = tries[p] + [(q, True)]
                walk(board[:q] + [p + 1] + board[q + 1:], mine, 1 - p)

    walk(board, [[], []], len(opening) % 2)
    return (histories, terminals, tuple(len(s) for s in sets), tuple(sum(s.values()) for s in sets))


@pytest.mark.parametrize("opening", SMALL)
def test_sizes_match_a_brute_force(opening):
    game = rcfr.load_game("phantom_ttt", opening=opening, cache=False)
    assert (game.num_histories, game.num_terminals, game.infosets_per_player,
            game.sequences_per_player) == brute_force(opening)


def test_rules():
    rules = rcfr.make_rules("phantom_ttt", opening=(4, 0, 8, 2))  # X on 4 and 8, O on 0 and 2; X to move
    s = rules.initial_state()
    assert rules.player(s) == 0 and rules.infoset_key(s) == "X:" and rules.actions(s) == ["1", "3", "5", "6", "7"]
    s = rules.next_state(s, rules.actions(s).index("6"))  # X places 6
    assert rules.player(s) == 1 and s.board[6] == 1 and rules.infoset_key(s) == "O:"
    before = rules.infoset_key(s)
    s = rules.next_state(s, rules.actions(s).index("6"))  # O tries 6: X's, so it fails and O goes again
    assert rules.player(s) == 1 and rules.infoset_key(s) == "O:6-" and "6" not in rules.actions(s)
    s = rules.next_state(s, rules.actions(s).index("3"))  # O places 3 after one failure
    assert rules.player(s) == 0 and rules.infoset_key(s) == "X:6+"
    # X's key is the same whether O needed one try or two
    t = rules.initial_state()
    t = rules.next_state(t, rules.actions(t).index("6"))
    t = rules.next_state(t, rules.actions(t).index("3"))
    assert rules.infoset_key(t) == rules.infoset_key(s) and rules.infoset_key(s) != before
    s = rules.next_state(s, rules.actions(s).index("3"))  # X tries 3: O's
    assert rules.player(s) == 0 and rules.infoset_key(s) == "X:6+ 3-"
    s = rules.next_state(s, rules.actions(s).index("7"))  # 6-7-8 is X's line: the game ends at once
    assert rules.player(s) == TERMINAL and rules.utility(s) == 1.0
    # O wins: 0-1-2 with X elsewhere
    o = rcfr.make_rules("phantom_ttt", opening=(4, 0, 8, 2, 6))  # O to move
    s = o.initial_state()
    s = o.next_state(s, o.actions(s).index("1"))
    assert o.player(s) == TERMINAL and o.utility(s) == -1.0
    # a draw: the board fills without a line
    d = rcfr.make_rules("phantom_ttt", opening=(0, 1, 2, 4, 3, 5, 7, 6))  # X to move, only 8 empty
    s = d.initial_state()
    assert d.actions(s) == ["8"]
    s = d.next_state(s, 0)
    assert d.player(s) == TERMINAL and d.utility(s) == 0.0


def test_opening_is_checked():
    with pytest.raises(ValueError, match="'opening'.*distinct squares 0-8"):
        rcfr.make_rules("phantom_ttt", opening=(0, 0))
    with pytest.raises(ValueError, match="'opening'.*distinct squares 0-8"):
        rcfr.make_rules("phantom_ttt", opening=(9,))
    with pytest.raises(ValueError, match="'opening'.*undecided"):
        rcfr.make_rules("phantom_ttt", opening=(0, 3, 1, 4, 2))  # X already has a line


def test_full_game_is_refused_by_the_compiled_path():
    with pytest.raises(ValueError, match=r"phantom_ttt.*16,363,068,211 histories"):
        rcfr.load_game("phantom_ttt", cache=False, compiled=True)


def test_small_instance_solves():
    game = rcfr.load_game("phantom_ttt", opening=(4, 0, 8, 2), cache=False)
    policy = rcfr.make_solver("cfr+", game).run(200).average_policy()
    assert rcfr.evaluate(game, policy).exploitability < 0.02


@pytest.mark.parametrize("opening", [(4, 0, 8, 2, 6), (0, 1, 4, 8), (4, 0, 8), (0, 1, 4)])
@pytest.mark.parametrize("collapse", [True, False])
def test_belief_count_of_information_sets(opening, collapse):
    """`phantom_infosets` walks try sequences with beliefs, not histories: it must agree with the brute force."""
    from rcfr.games.phantom_sizes import phantom_infosets
    assert phantom_infosets(opening, collapse) == brute_force(opening, collapse)[2:]


def forgotten(tries: tuple, forget: str):
    """What a player keeps of its tries ((square, placed) pairs in order) under the thesis's abstractions,
    written from their definitions: an independent check of `forget_code`."""
    turns, current = [], []
    for q, ok in tries:
        if ok:
            turns.append((frozenset(current), q))
            current = []
        else:
            current.append(q)
    if forget == "fosf":
        return tuple(turns), frozenset(current)
    if forget == "foi":
        return tuple(q for q, ok in tries if not ok), tuple(q for q, ok in tries if ok)
    if forget == "fos":
        return tuple(None if ok else q for q, ok in tries), frozenset(q for q, ok in tries if ok)
    return frozenset(q for q, ok in tries if not ok), frozenset(q for q, ok in tries if ok)


@pytest.mark.parametrize("forget", ["fosf", "foi", "fos", "foe"])
def test_forget_abstractions(forget):
    from rcfr.abstraction import make_abstraction
    from rcfr.games.phantom_sizes import phantom_infosets
    opening = (4, 0, 8)
    game = rcfr.load_game("phantom_ttt", opening=opening, cache=False)
    abstraction = make_abstraction(game, "phantom_ttt_forget", forget=forget)
    groups = {}
    for i, key in enumerate(game.infoset_keys):
        who, _, tries = str(key).partition(":")
        tries = tuple((int(t[:-1]), t[-1] == "+") for t in tries.split())
        groups.setdefault((who, forgotten(tries, forget)), set()).add(int(abstraction.infoset_map[i]))
    assert all(len(ids) == 1 for ids in groups.values())  # merged exactly as the definition says
    assert len(groups) == len(abstraction.abstract_keys)
    player = game.infoset_player
    sizes = game.infoset_num_actions
    sets = tuple(len(set(abstraction.infoset_map[player == p])) for p in (0, 1))
    pairs = tuple(sum(sizes[np.flatnonzero(abstraction.infoset_map == a)[0]] for a in set(abstraction.infoset_map[player == p]))
                  for p in (0, 1))
    assert phantom_infosets(opening, forget=forget) == (sets, pairs)
    with pytest.raises(ValueError, match="forget"):
        make_abstraction(game, "phantom_ttt_forget", forget="fo")
