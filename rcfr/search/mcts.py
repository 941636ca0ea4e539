"""Monte Carlo tree search (UCT) for stochastic games, with double progressive widening (thesis
§6.2.1) and the variance reduction of chapter 7: control variates, common random numbers and
antithetic variates, alone or combined.

Leaves are scored by the game's heuristic (``leaf="evaluate"``, as chapter 6 does for a direct
comparison with MCMS) or by a rollout of the game's default policy (``leaf="rollout"``, chapter 7).
Values are player 0's; UCB at a Min node ranks the negated means.

Variance reduction (§7.1-7.3), for games with uniform raw chance outcomes:

* control variates: each edge (s, a) also records Y = sum over the rest of the trajectory of
  ``I[b(S_{i+1})] - P[b(S_{i+1}) | S_i, A_i]`` (`game.control`); its mean is zero, and the edge's value
  is ``mean(X) + c * mean(Y)`` with ``c = -Cov(X, Y) / Var(Y)`` once the edge has `cv_online`
  visits, the game's offline constant (`game.cv_constant`) before.
* common random numbers: the m-th simulation through each root action is driven by the m-th
  shared batch of raw chance outcomes (drawn once, extended as needed), so the actions' returns
  are compared on the same luck. A game with ``crn_scope = "recursive"`` (Dominion) shares at every
  node instead: a simulation that takes the m_0-th visit of an action at the root, the m_1-th of an
  action at the next node, ..., draws the chance outcome after its d-th action from the batch keyed
  (m_0, ..., m_d), and its rollout from the last batch on. So the m-th visits of all actions at a
  state share their next draw, and subtrees under different actions keep sharing where their visit
  counts agree.
* antithetic variates: the (2k+1)-th simulation through a root action replays the 2k-th one's batch
  mapped by `game.antithetic` (a probability-preserving pairing of lucky and unlucky outcomes).
  The batch then holds luck ranks, which `game.ranked_outcome` reads in each state (Can't Stop's
  luck depends on the position; Pig's ranks are the dice). Combined with common random numbers,
  the odd shared batches are the antithetic images of the even ones.

Games with a compiled ``rollout`` (both solitaires) run the default policy inside numba, on
uniforms drawn ahead from the searcher's generator; others run `default_policy` step by step.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..options import check_float, check_int
from .base import SearchGame


class Batch:
    """A lazily extended array of chance draws (raw outcomes, or luck ranks under antithetic
    variates); ``mirror`` reads another batch through the game's antithetic map."""

    __slots__ = ("raw", "rng", "n", "mirror", "anti")

    def __init__(self, rng, n, mirror=None, anti=None):
        self.raw, self.rng, self.n, self.mirror, self.anti = np.empty(0, dtype=np.int64), rng, n, mirror, anti

    def view(self, size: int) -> np.ndarray:
        """The draws, at least `size` of them."""
        if len(self.raw) < size:
            if self.mirror is not None:
                self.raw = np.asarray(self.anti(self.mirror.view(size)), dtype=np.int64)
            else:
                more = self.rng.integers(self.n, size=max(size, 2 * len(self.raw), 32) - len(self.raw))
                self.raw = np.concatenate([self.raw, more])
        return self.raw

    def get(self, i):
        raw = self.raw
        return int(raw[i]) if i < len(raw) else int(self.view(i + 1)[i])


#: the rules a compiled rollout stands for
ROLLOUT_RULES = ("is_terminal", "actions", "apply", "utility", "default_policy", "control", "ranked_outcome", "sample")


def compiled_rollout(game) -> bool:
    """Whether `game.rollout` speaks for the game's rules: the class defining it also defines (or
    inherits) every rule it compiles; a subclass overriding one rolls out step by step."""
    owner = next((k for k in type(game).__mro__ if "rollout" in vars(k)), None)
    return owner is not None and all(getattr(type(game), r) is getattr(owner, r) for r in ROLLOUT_RULES)


class Node:
    __slots__ = ("state", "visits", "actions", "n", "x", "y", "xy", "yy", "children")

    def __init__(self, state, actions):
        self.state = state
        self.visits = 0
        self.actions = actions
        k = len(actions)
        self.n = [0] * k
        self.x = [0.0] * k      # sums of returns X
        self.y = [0.0] * k      # sums of control variates Y (zero unless control variates are on)
        self.xy = [0.0] * k
        self.yy = [0.0] * k
        self.children = [None] * k   # per action: {next state: Node}


class MCTS:
    """UCT; ``widening=(C, alpha)`` turns on double progressive widening."""

    def __init__(self, game: SearchGame, *, c: float = 50.0, simulations: int | None = None,
                 seconds: float | None = None, leaf: str = "evaluate", widening=None,
                 control_variates: bool = False, common_random_numbers: bool = False,
                 antithetic: bool = False, cv_online: int = 50, recommend: str = "visits", seed: int = 0):
        if leaf not in ("evaluate", "rollout"):
            raise ValueError(f"unknown leaf {leaf!r}; allowed: evaluate, rollout")
        if recommend not in ("visits", "mean"):
            raise ValueError(f"unknown recommend {recommend!r}; allowed: visits, mean")
        if simulations is None and seconds is None:
            raise ValueError("give simulations or seconds")
        if simulations is not None:
            simulations = check_int("simulations", simulations, 1)
        if seconds is not None:  # finite: an infinite budget with no simulation limit never returns
            seconds = check_float("seconds", seconds, 0.0, low_open=True)
        c = check_float("c (the UCB exploration constant)", c, 0.0)
        if widening is not None:
            widening = tuple(widening) if isinstance(widening, (tuple, list)) else (widening,)
            if len(widening) != 2:
                raise ValueError(f"widening must be a pair (C > 0, 0 <= alpha <= 1) or None, got {widening!r}")
            widening = (check_float("widening C", widening[0], 0.0, low_open=True),
                        check_float("widening alpha", widening[1], 0.0, 1.0))
        cv_online = check_int("cv_online", cv_online, 1)
        seed = check_int("seed", seed, 0)
        for flag, method in ((control_variates, "control"), (antithetic, "antithetic")):
            if flag and not hasattr(game, method):
                raise ValueError(f"{game.name} has no {method}(); variance reduction '{method}' needs it")
        self.game, self.c, self.simulations, self.seconds = game, c, simulations, seconds
        self.leaf, self.widening, self.recommend = leaf, widening, recommend
        self.cv, self.crn, self.av, self.cv_online = control_variates, common_random_numbers, antithetic, cv_online
        self.ranked = antithetic                 # batches hold luck ranks (read by game.ranked_outcome)
        self.crn_recursive = common_random_numbers and getattr(game, "crn_scope", "root") == "recursive"
        self.rng = np.random.default_rng(seed)
        self.nodes_touched = 0
        self._u, self._upos = np.empty(0), 0     # uniforms drawn ahead (fresh chance, compiled rollouts)
        self._uniform_chance = type(game).sample is SearchGame.sample
        self.compiled = compiled_rollout(game)
        self._solo = game.num_players == 1

    # -- public -----------------------------------------------------------------------------------
    def run(self, state) -> Node:
        """Build a fresh tree from `state` within the budget; the root node. A terminal state, or one the
        game cannot read, is refused (there is no decision to search)."""
        g = self.game
        g.check_state(state)
        try:
            terminal = bool(g.is_terminal(state))
            actions = [] if terminal else list(g.actions(state))
        except Exception as err:  # the game's rules fail on what is not one of its states
            raise ValueError(f"state {state!r:.80} is not a state of {g.name}: {type(err).__name__}: {err}") from None
        if terminal:
            raise ValueError(f"state {state!r:.80} is terminal in {g.name}: there is no decision to search")
        if not actions:
            raise ValueError(f"state {state!r:.80} of {g.name} has no legal action")
        root = Node(state, actions)
        self._shared = []                       # common random numbers: batch m for visit m
        self._keyed = {}                        # recursive common random numbers: batch per visit path
        self._last = [None] * len(root.actions)  # antithetic: each root action's last fresh batch
        deadline = time.perf_counter() + self.seconds if self.seconds is not None else math.inf
        limit = self.simulations if self.simulations is not None else math.inf
        done = 0
        while done < limit and (done & 15 or done == 0 or time.perf_counter() < deadline):  # one at least
            self._simulate(root)
            done += 1
        return root

    def decide(self, state) -> tuple[int, float, int]:
        """(action, value estimate of that action, simulations)."""
        root = self.run(state)
        i = self._pick(root)
        return root.actions[i], self.edge_value(root, i), root.visits

    def action_values(self, state) -> tuple[Node, list[float]]:
        root = self.run(state)
        return root, [self.edge_value(root, i) for i in range(len(root.actions))]

    def edge_value(self, node: Node, i: int) -> float:
        n = node.n[i]
        if n == 0:
            return math.nan
        mean = node.x[i] / n
        if not self.cv:
            return mean
        return mean + self._cv_coefficient(node, i) * node.y[i] / n

    def new_batch(self) -> Batch:
        return Batch(self.rng, self.game.num_raw_outcomes)

    def mirror(self, batch: Batch) -> Batch:
        """The antithetic image of `batch`."""
        return Batch(None, 0, batch, self.game.antithetic)

    def sample_return(self, state, action, batch: Batch | None = None) -> tuple[float, float]:
        """(X, Y): the return of `action` then the default policy to the end, and the summed control
        terms, with chance drawn from `batch` (or fresh); the rollout the tree search uses at leaves."""
        g = self.game
        raw = self._draw(state, action, batch, 0)
        term = g.control(state, action, raw) if self.cv else 0.0
        value, tail = self._leaf(g.apply(state, action, raw), batch, 1, rollout=True)
        return value, term + tail

    # -- internals --------------------------------------------------------------------------------
    def _cv_coefficient(self, node, i):
        n = node.n[i]
        if n < self.cv_online:
            return self.game.cv_constant
        my, mx = node.y[i] / n, node.x[i] / n
        var = node.yy[i] / n - my * my
        if var <= 1e-12:
            return self.game.cv_constant
        return -(node.xy[i] / n - mx * my) / var

    def _pick(self, root):
        if self.recommend == "visits":
            return max(range(len(root.actions)), key=lambda i: root.n[i])
        sign = 1 if self.game.num_players == 1 or self.game.player(root.state) == 0 else -1
        values = [sign * self.edge_value(root, i) if root.n[i] else -math.inf for i in range(len(root.actions))]
        return int(np.argmax(values))

    def _width(self, visits):
        C, alpha = self.widening
        return max(1, math.ceil(C * max(visits, 1) ** alpha))

    def _select(self, node):
        k = len(node.actions)
        if self.widening is not None:
            k = min(k, self._width(node.visits))
        n = node.n
        for i in range(k):
            if n[i] == 0:
                return i
        sign = 1 if self._solo or self.game.player(node.state) == 0 else -1
        log_n, c = math.log(node.visits), self.c
        best, best_i = -math.inf, 0
        if self.cv:
            for i in range(k):
                u = sign * self.edge_value(node, i) + c * math.sqrt(log_n / n[i])
                if u > best:
                    best, best_i = u, i
            return best_i
        x = node.x                  # edge_value inlined: the mean return (the hot loop of the tree)
        for i in range(k):
            u = sign * (x[i] / n[i]) + c * math.sqrt(log_n / n[i])
            if u > best:
                best, best_i = u, i
        return best_i

    def _batch(self, root, i):
        """The batch driving the next simulation through root action i, or None (plain sampling)."""
        m = root.n[i]
        if self.crn:
            while len(self._shared) <= m:
                j = len(self._shared)
                self._shared.append(self.mirror(self._shared[j - 1]) if self.av and j % 2 else self.new_batch())
            return self._shared[m]
        if self.av:
            if m % 2 == 0:
                self._last[i] = self.new_batch()
                return self._last[i]
            return self.mirror(self._last[i])
        return None

    def _simulate(self, root):
        g = self.game
        node = root
        path = []          # (node, action index, control term of that step)
        batch, pos = None, 0
        key = ()
        value = None
        while True:
            self.nodes_touched += 1
            s = node.state
            if g.is_terminal(s):
                value = g.utility(s)
                break
            i = self._select(node)
            a = node.actions[i]
            if self.crn_recursive:
                key += (node.n[i],)
                batch, pos = self._keyed.get(key), 0
                if batch is None:
                    batch = self._keyed[key] = self.new_batch()
            elif node is root:
                batch = self._batch(root, i)
            raw = self._draw(s, a, batch, pos)
            pos += batch is not None
            nxt = g.apply(s, a, raw)
            path.append([node, i, g.control(s, a, raw) if self.cv else 0.0])
            children = node.children[i]
            if children is None:
                children = node.children[i] = {}
            child = children.get(nxt)
            if child is None and self.widening is not None and children and len(children) >= self._width(node.n[i]):
                # the outcome set is full: revisit a stored outcome, chosen by its visits
                states = list(children)
                weights = np.array([children[t].visits for t in states], dtype=float) + 1.0
                child = children[states[int(self.rng.choice(len(states), p=weights / weights.sum()))]]
            if child is None:
                child = children[nxt] = Node(nxt, [] if g.is_terminal(nxt) else list(g.actions(nxt)))
                child.visits = 0
                value, tail = self._leaf(nxt, batch, pos)
                path[-1][2] += tail
                child.visits += 1
                break
            node = child
        # back up: X is the return, Y the control terms from this edge to the end
        y = 0.0
        for node, i, term in reversed(path):
            y += term
            node.visits += 1
            node.n[i] += 1
            node.x[i] += value
            if self.cv:
                node.y[i] += y
                node.xy[i] += value * y
                node.yy[i] += y * y
        return value

    def _draw(self, s, a, batch, pos, rng=None):
        """The raw chance outcome after (s, a): the batch's draw at `pos` (a luck rank read in s under
        antithetic variates), or a fresh sample."""
        if batch is None:
            if rng is None and self._uniform_chance:      # from the uniforms drawn ahead: faster
                if self._upos >= len(self._u):
                    self._u, self._upos = self.rng.random(1 << 14), 0
                self._upos += 1
                return int(self._u[self._upos - 1] * self.game.num_raw_outcomes)
            return self.game.sample(s, a, rng or self.rng)
        draw = batch.get(pos)
        return self.game.ranked_outcome(s, a, draw) if self.ranked else draw

    def _leaf(self, s, batch, pos, rollout=False):
        """(value, summed control terms) at a new leaf: utility, heuristic, or a rollout."""
        g = self.game
        if g.is_terminal(s):
            return g.utility(s), 0.0
        if self.leaf == "evaluate" and not rollout:
            return g.evaluate(s), 0.0
        if self.compiled:
            return self._compiled_rollout(s, batch, pos)
        return self.python_rollout(s, batch, pos)[:2]

    def python_rollout(self, s, batch, pos, rng=None):
        """(value, control terms, actions) of `default_policy` to the end, step by step; `rng` (for
        the policy and fresh chance) defaults to the searcher's own."""
        g = self.game
        tail, steps = 0.0, 0
        while not g.is_terminal(s):
            steps += 1
            a = g.default_policy(s, rng or self.rng)
            raw = self._draw(s, a, batch, pos, rng)
            pos += batch is not None
            if self.cv:
                tail += g.control(s, a, raw)
            s = g.apply(s, a, raw)
        self.nodes_touched += steps
        return g.utility(s), tail, steps

    def _compiled_rollout(self, s, batch, pos):
        need = 1024
        while True:
            if len(self._u) - self._upos < need:
                self._u, self._upos = self.rng.random(max(need, 1 << 14)), 0
            draws = batch.view(pos + need) if batch is not None else None
            value, tail, _, upos, steps = self.game.rollout(s, draws, pos, self.ranked, self._u, self._upos, self.cv)
            if steps >= 0:
                self._upos = upos
                self.nodes_touched += steps
                return value, tail
            need *= 4
