"""Rules of the search games (Pig, EinStein, Can't Stop) and the search registry."""

import math

import numpy as np
import pytest

import rcfr.search as S
from rcfr.search.cantstop import HEIGHTS, SORTED, CantStop
from rcfr.search.cantstop import ROLL as CS_ROLL
from rcfr.search.cantstop import STOP as CS_STOP
from rcfr.search.einstein import EinStein
from rcfr.search.pig import DICE, ROLL, STOP, Pig, PigSolitaire, antithetic_roll


def raw(a, b):
    return DICE.index((a, b))


def test_pig_rules():
    g = Pig(goal=20)
    s = (5, 7, 0, 0)
    assert g.actions(s) == (ROLL,)                     # a turn starts with a roll
    s = g.apply(s, ROLL, raw(3, 4))
    assert s == (5, 7, 7, 0) and g.actions(s) == (ROLL, STOP)
    assert g.apply(s, ROLL, raw(1, 5)) == (5, 7, 0, 1)     # a single 1 loses the turn total
    assert g.apply(s, ROLL, raw(1, 1)) == (0, 7, 0, 1)     # two 1s lose the whole score
    assert g.apply(s, STOP, 0) == (12, 7, 0, 1)
    won = g.apply(s, ROLL, raw(4, 5))                       # 5 + 16 >= 20 banks at once
    assert g.is_terminal(won) and g.utility(won) == 100.0


def test_pig_chance_distribution():
    g = Pig()
    ids, probs = g.chance((0, 0, 0, 0), ROLL)
    assert math.isclose(sum(probs), 1.0)
    # every raw outcome's next state is one of the distinct outcomes, with the right total mass
    s = (10, 0, 4, 0)
    mass = {}
    for o in range(36):
        t = g.apply(s, ROLL, o)
        mass[t] = mass.get(t, 0) + 1 / 36
    assert {g.apply(s, ROLL, o): p for o, p in zip(ids, probs)} == pytest.approx(mass)
    assert sorted(antithetic_roll(o) for o in range(36)) == list(range(36))
    assert all(antithetic_roll(antithetic_roll(o)) == o for o in range(36))
    assert antithetic_roll(raw(6, 6)) == raw(1, 1)


def test_pig_solitaire_rules():
    g = PigSolitaire(turns=2, cap=30)
    s = g.initial()
    assert g.actions(s) == (ROLL, STOP)                     # passing is allowed in the solitaire
    assert g.apply(s, STOP, 0) == (1, 0, 0)
    s = g.apply(s, ROLL, raw(6, 6))
    assert s == (2, 0, 12)
    s = g.apply(s, ROLL, raw(6, 6))
    assert s == (2, 0, 24)
    assert g.apply(s, ROLL, raw(3, 4)) == (0, 30, 0)        # reaching the cap ends the game
    last = g.apply((1, 20, 5), STOP, 0)
    assert g.is_terminal(last) and g.utility(last) == 25.0


def test_einstein_rules():
    g = EinStein()
    board = [0] * 25
    board[0], board[6], board[24 - 1] = 1, 4, 7       # red 1 and 4; blue 1 next to its corner
    s = (tuple(board), 0, 2)                          # roll 2: red 2 is gone -> pieces 1 or 4
    moves = {divmod(a, 25) for a in g.actions(s)}
    assert moves == {(0, 6), (0, 5), (0, 1), (6, 12), (6, 11), (6, 7)}
    assert g.movable(s) == [6, 0]
    t = g.apply(s, 25 * 6 + 12, 3)
    assert t[1] == 1 and t[2] == 4 and t[0][12] == 4 and t[0][6] == 0
    # capturing the last blue piece wins for red; blue reaching square 0 wins for blue
    board = [0] * 25
    board[18], board[23] = 3, 9
    s = (tuple(board), 0, 3)
    assert g.utility(g.apply(s, 25 * 18 + 23, 0)) == 100.0
    board = [0] * 25
    board[24 - 18], board[6], board[20] = 2, 8, 3
    s = (tuple(board), 1, 2)
    end = g.apply(s, 25 * 6 + 0, 0)
    assert g.is_terminal(end) and g.utility(end) == -100.0


def test_einstein_random_games_end():
    g = EinStein()
    rng = np.random.default_rng(0)
    for _ in range(50):
        s = g.initial(rng)
        for _ in range(200):
            if g.is_terminal(s):
                break
            s = g.step(s, g.default_policy(s, rng), rng)
        assert g.is_terminal(s)


def test_cantstop_rules():
    g = CantStop()
    s = g.initial()
    assert g.actions(s) == (CS_ROLL,)
    ids, probs = g.chance(s, CS_ROLL)
    assert len(ids) == 126 and math.isclose(sum(probs), 1.0)
    s = g.apply(s, CS_ROLL, SORTED.index((1, 1, 6, 6)))     # pairings (2,12) and (7,7)
    assert sorted(g.actions(s)) == sorted([2 + 13 * 0 + 10, 2 + 13 * 5 + 5])
    s = g.apply(s, 2 + 13 * 5 + 5, 0)                        # column 7 twice
    assert s[2][5] == 2 and g.actions(s) == (CS_ROLL, CS_STOP)
    stopped = g.apply(s, CS_STOP, 0)
    assert stopped[0][5] == 2 and stopped[3] == 1 and not any(stopped[2])
    # three markers placed: a throw that only fits other columns busts
    turn = [0] * 11
    turn[0], turn[1], turn[2] = 1, 1, 1                      # columns 2, 3, 4
    s = ((0,) * 11, (0,) * 11, tuple(turn), 0, None)
    bust = g.apply(s, CS_ROLL, THROW_66_66)
    assert bust[3] == 1 and not any(bust[2])
    # three claimed columns win
    perm = list(HEIGHTS[:3]) + [0] * 8
    assert g.is_terminal((tuple(perm), (0,) * 11, (0,) * 11, 1, None))


THROW_66_66 = SORTED.index((6, 6, 6, 6))


def test_registry_names_allowed_values():
    with pytest.raises(ValueError, match="allowed: cantstop, cantstop_solitaire, dominion_solitaire, einstein, pig, pig_solitaire"):
        S.load_search_game("chess")
    with pytest.raises(ValueError, match="allowed: goal"):
        S.load_search_game("pig", target=3)
    with pytest.raises(ValueError, match="allowed: exp"):
        S.make_searcher("alphazero", Pig())
    with pytest.raises(ValueError, match="width"):
        S.make_searcher("expss", Pig(), width=0, depth=2)
    with pytest.raises(ValueError, match="goal"):
        Pig(goal=1)
