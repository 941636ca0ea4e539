"""Princess and Monster (Lanctot 2013, section 3.1.5; Lanctot et al. 2009, section 5)."""

from __future__ import annotations

from typing import NamedTuple

from ..registry import check_choice
from .base import CHANCE, TERMINAL, GameRules
from .poker import _check_int
from .pursuit_fast import pursuit_fast


def grid_graph(rows: int = 3, cols: int = 3) -> tuple[tuple[int, ...], ...]:
    """Four-connected grid, nodes numbered row by row: the neighbours of each node, ascending."""
    def around(r, c):
        near = [(r - 1, c), (r, c - 1), (r, c + 1), (r + 1, c)]
        return tuple(rr * cols + cc for rr, cc in near if 0 <= rr < rows and 0 <= cc < cols)
    return tuple(around(n // cols, n % cols) for n in range(rows * cols))


def circle_graph(nodes: int = 8) -> tuple[tuple[int, ...], ...]:
    """A ring of `nodes` nodes: the neighbours of each node, ascending."""
    return tuple(tuple(sorted({(n - 1) % nodes, (n + 1) % nodes})) for n in range(nodes))


GRAPHS = {"grid": grid_graph(), "circle": circle_graph()}


class PursuitState(NamedTuple):
    paths: tuple[tuple[int, ...], tuple[int, ...]]  # each player's nodes so far, start first
    caught: bool


class PrincessAndMonster(GameRules):
    """PAM(t_max, G): a monster (player 0) and a princess (player 1) move in the dark on graph `graph`
    (``"grid"``: the four-connected 3x3 grid, nodes 0-8 row by row; ``"circle"``: 8 nodes in a ring).
    Each move goes to an adjacent node or stays put. The monster moves first; the time step t (0 at the
    start) grows by one after each princess move. The monster catches the princess when a move puts both
    on one node; the game ends then, or after the monster's move at t = t_max (2 t_max + 1 moves in all).
    Payoffs as in the thesis: the monster gets t_max - t + 1 for a capture at time t, -t_max if the
    princess escapes; the princess gets the negation.

    Starts: ``"random"`` (the 2009 paper): chance places the monster, then the princess, each uniformly
    on any node; equal starts are not a capture (captures happen by moving). ``"opposite"`` (the thesis's
    circle): the monster on node 0, the princess on the farthest node (circle 4, grid 8), no chance.
    Neither player ever sees the other, so an information set is one's own path: keys read
    ``M:4 1 0`` (the monster started on 4, then went to 1 and 0) or ``P:8``; action names are the
    destination nodes. These choices reproduce the 2009 paper's grid game: with t_max = 5 the longest
    history has 13 moves (2 chance + 11) and |H| = 91,803,132 (the paper: 91.8e6, "horizon 13").
    """

    name = "pam"

    def __init__(self, horizon: int = 5, graph: str = "grid", starts: str = "random"):
        self.horizon = _check_int("horizon", horizon, 0, 12)
        self.graph = check_choice("graph", graph, list(GRAPHS))
        self.starts = check_choice("starts", starts, ["random", "opposite"])
        self.neighbours = GRAPHS[graph]
        self.moves = 2 * self.horizon + 1

    @property
    def nodes(self) -> int:
        return len(self.neighbours)

    def initial_state(self):
        if self.starts == "opposite":
            return PursuitState(((0,), (self.nodes - 1 if self.graph == "grid" else self.nodes // 2,)), False)
        return PursuitState(((), ()), False)

    def _moves_made(self, s: PursuitState) -> int:
        return len(s.paths[0]) + len(s.paths[1]) - 2

    def player(self, s: PursuitState) -> int:
        if not s.paths[1]:
            return CHANCE
        made = self._moves_made(s)
        if s.caught or made == self.moves:
            return TERMINAL
        return made % 2

    def options(self, node: int) -> list[int]:
        """Where a player on `node` may go: its neighbours or itself, ascending."""
        return sorted(self.neighbours[node] + (node,))

    def actions(self, s: PursuitState):
        return [str(n) for n in self.options(s.paths[self.player(s)][-1])]

    def chance_outcomes(self, s: PursuitState):
        who = "m" if not s.paths[0] else "p"
        return [(f"{who}{n}", 1.0 / self.nodes) for n in range(self.nodes)]

    def next_state(self, s: PursuitState, action: int):
        if not s.paths[0]:
            return PursuitState(((action,), ()), False)
        if not s.paths[1]:
            return PursuitState((s.paths[0], (action,)), False)
        p = self.player(s)
        paths = list(s.paths)
        paths[p] = paths[p] + (self.options(paths[p][-1])[action],)
        return PursuitState(tuple(paths), paths[0][-1] == paths[1][-1])

    def utility(self, s: PursuitState) -> float:
        if not s.caught:
            return -float(self.horizon)
        t = (self._moves_made(s) - 1) // 2  # the move that caught was move number 2t or 2t + 1 (from 0)
        return float(self.horizon - t + 1)

    def fast(self):
        return pursuit_fast(self)

    def estimate_histories(self) -> int:
        """Exact, by a recursion over (monster node, princess node, moves made); no move is forced."""
        memo: dict[tuple[int, int, int], int] = {}

        def below(m: int, p: int, made: int) -> int:
            if (made and m == p) or made == self.moves:
                return 1
            key = (m, p, made)
            if key not in memo:
                here = (m, p)[made % 2]
                memo[key] = 1 + sum(below(n, p, made + 1) if made % 2 == 0 else below(m, n, made + 1)
                                    for n in self.options(here))
            return memo[key]

        start = self.initial_state()
        if start.paths[1]:
            return below(start.paths[0][0], start.paths[1][0], 0)
        return 1 + self.nodes + sum(below(m, p, 0) for m in range(self.nodes) for p in range(self.nodes))

    def infoset_key(self, s: PursuitState) -> str:
        p = self.player(s)
        return f"{'MP'[p]}:{' '.join(map(str, s.paths[p]))}"
