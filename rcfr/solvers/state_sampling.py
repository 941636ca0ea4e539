"""MCCFR through OpenSpiel's state API (the *state path*): OpenSpiel games too large to compile.

`StateMCCFR` runs external or outcome sampling by walking pyspiel states (``state.child``,
``chance_outcomes()``, ``information_state_string(player)``, ``returns()``); nothing is compiled and no
history is stored. Information sets are indexed as they are first met (`InfosetTable`: a dict from
OpenSpiel's information-state string to a row, regrets and average sums in flat float64 arrays), so
memory follows the sets met. The estimators, random stream, forced-move collapsing and `nodes_touched`
are those of rcfr's compiled walks (`rcfr.sampling.tree_walks.tree_walk`,
`rcfr.sampling.outcome_walks.outcome_walk`): on a compilable game a seeded run here equals
``ExternalSamplingMCCFR`` / ``OutcomeSamplingMCCFR`` on ``load_game("openspiel:<game>")`` bit for bit.
The walks are plain Python, about 100 times slower per node than the compiled ones (docs/large_games.md,
"Huge OpenSpiel games").

Policies (`StatePolicy`, `rcfr.policy.state`) are keyed by information-state strings and OpenSpiel
action ids, saved as ``.npz`` with the game string and OpenSpiel version as identity, and played by
OpenSpiel's tools through `StatePolicy.to_openspiel` (uniform at sets the run never met). The sets' table is
`rcfr.policy.state_sets`.
"""

from __future__ import annotations

import json

import numpy as np

from ..games.openspiel import canonical_name, load_openspiel_game, openspiel_version
from ..options import check_checkpoint, check_choice, check_float, check_int, check_seed
from ..policy.state import StatePolicy, rows
from ..policy.state_sets import InfosetTable

#: the walks of the state path, in the words of sampled RCFR's `sampler` option (rcfr.options.SAMPLERS)
SAMPLERS = ("external", "outcome")
SOLVER = "state-mccfr"
CHANCE = -1  # pyspiel.PlayerId.CHANCE; players are >= 0, every other negative id is terminal
MASK = (1 << 64) - 1


# ---- the random stream (rcfr.sampling.decisions, in Python) ----------------------------------------
def seed_state(seed: int) -> int:
    """The splitmix64 state of `seed`, as `rcfr.sampling.buffers.seed_state` derives it."""
    return int(np.random.SeedSequence(int(seed)).generate_state(1, np.uint64)[0])


class Stream:
    """splitmix64, the compiled walks' random stream: the same seed draws the same numbers there and here."""

    __slots__ = ("state",)

    def __init__(self, state: int):
        self.state = state

    def uniform(self) -> float:
        z = self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return ((z ^ (z >> 31)) >> 11) * (1.0 / 9007199254740992.0)


def pick(probs, x: float) -> int:
    """The index whose cumulative-probability interval holds x in [0, 1) (inverse CDF)."""
    for k in range(len(probs) - 1):
        x -= probs[k]
        if x < 0.0:
            return k
    return len(probs) - 1


def pick_mixed(sigma, eps: float, x: float) -> int:
    """`pick` from ``eps * uniform + (1 - eps) * sigma``."""
    n = len(sigma)
    for k in range(n - 1):
        x -= eps / n + (1.0 - eps) * sigma[k]
        if x < 0.0:
            return k
    return n - 1


def regret_matching(regrets) -> list[float]:
    """The current strategy of regrets `regrets` (uniform where none is positive)."""
    total = 0.0
    for r in regrets:
        if r > 0.0:
            total += r
    if total > 0.0:
        return [r / total if r > 0.0 else 0.0 for r in regrets]
    return [1.0 / len(regrets)] * len(regrets)



# ---- the solver ---------------------------------------------------------------------------------
class StateMCCFR:
    """External-sampling (``sampler="external"``) or outcome-sampling (``"outcome"``, epsilon-on-policy
    exploration at the traverser's decisions) MCCFR on OpenSpiel game string `game` through its state API,
    alternating updates, stochastically weighted uniform averaging, regret matching. Any two-player
    zero-sum game with explicit chance and information-state strings, however large: the walk stores only
    the information sets it meets. One iteration is one traversal per player."""

    solver_name = SOLVER

    def __init__(self, game: str, *, sampler: str = "external", epsilon: float = 0.6, seed: int = 0):
        check_choice("sampler", sampler, SAMPLERS)
        self.epsilon = check_float("epsilon", epsilon, 0.0, 1.0, low_open=True)
        self.seed = check_seed("seed", seed)
        self.sampler = sampler
        self.game = load_openspiel_game(game)  # refuses: not 2 players, not zero-sum, sampled chance, ...
        self.game_string = canonical_name(self.game)
        self.version = openspiel_version()
        self.table = InfosetTable()
        self.stream = Stream(seed_state(self.seed))
        self.iteration = 0
        self.nodes_touched = 0

    @property
    def options(self) -> dict:
        return {"sampler": self.sampler, "epsilon": self.epsilon, "seed": self.seed}

    def run(self, iterations: int) -> "StateMCCFR":
        check_int("iterations", iterations, 1)
        walk = self._external if self.sampler == "external" else self._outcome
        for _ in range(iterations):
            self.iteration += 1
            for traverser in (0, 1):
                walk(traverser)
        return self

    def iterate(self) -> "StateMCCFR":
        return self.run(1)

    def size(self) -> int:
        """Representation size: one regret per (information set met, action)."""
        return len(self.table.regrets)

    # ---- the walks -------------------------------------------------------------------------------
    def _external(self, traverser: int) -> None:
        """One external-sampling traversal: every action of the traverser, one sampled action per
        opponent information set (drawn at its first visit, kept for the traversal) and per chance node;
        the traverser's sampled regrets are added once the walk is done (`tree_walk`'s order: children
        last to first, so the random draws come in the compiled walk's order). Chance and opponent
        nodes have one child walked, so the walk loops through them and recurses at the traverser's."""
        table, uniform = self.table, self.stream.uniform
        regrets, avg, first, actions_of = table.regrets, table.avg, table.first, table.actions
        sign = 1.0 if traverser == 0 else -1.0
        sigmas, chosen, deltas = {}, {}, {}
        nodes = 0

        def walk(state) -> float:
            nonlocal nodes
            while True:
                player = state.current_player()
                if player == CHANCE:
                    outcomes = state.chance_outcomes()
                    if len(outcomes) > 1:
                        nodes += 1
                        state = state.child(outcomes[pick([p for _, p in outcomes], uniform())][0])
                    else:
                        state.apply_action(outcomes[0][0])
                    continue
                if player < 0:
                    nodes += 1
                    return sign * state.returns()[0]
                row = table.met(state, player)
                if row is None:  # a forced move, played
                    continue
                nodes += 1
                f, e = first[row], first[row + 1]
                if player == traverser:
                    break
                pair = chosen.get(row)
                if pair is None:
                    sigma = regret_matching(regrets[f:e])
                    pair = chosen[row] = (pick(sigma, uniform()), sigma)
                k, sigma = pair
                for a in range(e - f):
                    avg[f + a] += 1.0 * sigma[a]  # 1.0: the weight t ** 0, as compiled
                state = state.child(actions_of[f + k])
            n = e - f
            sigma = sigmas.get(row)
            if sigma is None:
                sigma = sigmas[row] = regret_matching(regrets[f:e])
            values = [0.0] * n
            for a in range(n - 1, -1, -1):
                values[a] = walk(state.child(actions_of[f + a]))
            v = 0.0
            for a in range(n):
                v += sigma[a] * values[a]
            delta = deltas.get(row)
            if delta is None:
                delta = deltas[row] = [0.0] * n
            for a in range(n):
                delta[a] += values[a] - v
            return v

        try:
            walk(self.game.new_initial_state())
            self.nodes_touched += nodes
            for row, delta in deltas.items():
                f = first[row]
                for a, d in enumerate(delta):
                    regrets[f + a] += d
        finally:  # the closure refers to itself, a cycle that would keep the dicts until a gc pass
            sigmas.clear(), chosen.clear(), deltas.clear()

    def _outcome(self, traverser: int) -> None:
        """One outcome-sampling trajectory (`outcome_walk`): epsilon-exploring at the traverser's
        decisions, crediting the opponent's average on the way, then the traverser's sampled regrets
        ``W * tail * (1 - sigma(a*))`` and ``-W * tail * sigma(a*)`` on the way back."""
        table, uniform, eps = self.table, self.stream.uniform, self.epsilon
        regrets, avg, first, actions_of = table.regrets, table.avg, table.first, table.actions
        state = self.game.new_initial_state()
        path = []  # (player, first slot, sigma or chance probability, action index, opponent reach, chance reach)
        r0 = r1 = rc = q = 1.0
        while True:
            player = state.current_player()
            if player == CHANCE:
                outcomes = state.chance_outcomes()
                if len(outcomes) == 1:
                    state.apply_action(outcomes[0][0])
                    continue
                k = pick([p for _, p in outcomes], uniform())
                xi = outcomes[k][1]
                path.append((CHANCE, 0, xi, k, 0.0, 0.0))
                rc *= xi
                q *= xi
                state.apply_action(outcomes[k][0])
                continue
            if player < 0:
                break
            row = table.met(state, player)
            if row is None:  # a forced move, played
                continue
            f, e = first[row], first[row + 1]
            n = e - f
            sigma = regret_matching(regrets[f:e])
            if player == traverser:
                k = pick_mixed(sigma, eps, uniform())
                xi = eps / n + (1.0 - eps) * sigma[k]
            else:
                k = pick(sigma, uniform())
                xi = sigma[k]
                stochastic = 1.0 * (r0 if player == 0 else r1) * rc / q  # 1.0: the weight t ** 0, as compiled
                for a in range(n):
                    avg[f + a] += stochastic * sigma[a]
            path.append((player, f, sigma, k, r1 if player == 0 else r0, rc))
            if player == 0:
                r0 *= sigma[k]
            else:
                r1 *= sigma[k]
            q *= xi
            state.apply_action(actions_of[f + k])
        self.nodes_touched += len(path) + 1
        u0 = state.returns()[0]
        tail = 1.0
        for player, f, sigma, k, opp, chance in reversed(path):
            if player == CHANCE:
                tail *= sigma
                continue
            sk = sigma[k]
            if player == traverser:
                w = (u0 if player == 0 else -u0) * opp * chance / q
                for a in range(len(sigma)):
                    if a == k:
                        regrets[f + a] += w * tail * (1.0 - sk)
                    else:
                        regrets[f + a] += -(w * tail * sk)
            tail *= sk

    # ---- policies --------------------------------------------------------------------------------
    def current_policy(self) -> "StatePolicy":
        """Regret matching on the cumulative regrets of every set met."""
        return self._policy(np.maximum(np.frombuffer(self.table.regrets, np.float64), 0.0))

    def average_policy(self) -> "StatePolicy":
        """The normalized average-strategy sums of every set met (uniform where a set has none yet)."""
        return self._policy(np.frombuffer(self.table.avg, np.float64))

    def _policy(self, values: np.ndarray) -> "StatePolicy":
        t = self.table
        first = np.frombuffer(t.first, np.int64)
        actions = np.frombuffer(t.actions, np.int64)
        return StatePolicy.from_rows(self.game_string, self.version, t.keys(), first, actions, rows(values, first))

    # ---- checkpoints -----------------------------------------------------------------------------
    def state_dict(self) -> dict[str, np.ndarray]:
        """Everything needed to resume bit for bit, as arrays (np.savez writes it without pickling)."""
        state = {f"table.{k}": v for k, v in self.table.state_dict().items()}
        state.update(solver=np.array(SOLVER), options=np.array(json.dumps(self.options, sort_keys=True)),
                     game=np.array(self.game_string), open_spiel=np.array(self.version),
                     rng=np.array(self.stream.state, np.uint64), iteration=np.array(self.iteration, np.int64),
                     nodes_touched=np.array(self.nodes_touched, np.int64))
        return state

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        """Resume from `state_dict`'s arrays; another solver, game, OpenSpiel version or options is refused."""
        check_checkpoint(state)
        mine = {"solver": SOLVER, "game": self.game_string, "open_spiel": self.version,
                "options": json.dumps(self.options, sort_keys=True)}
        for field, want in mine.items():
            got = str(state[field]) if field in state else None
            if got != want:
                raise ValueError(f"checkpoint field {field!r} is {got!r}, this solver's is {want!r}")
        table = InfosetTable.from_state({k[6:]: v for k, v in state.items() if k.startswith("table.")})
        iteration, nodes = int(state["iteration"]), int(state["nodes_touched"])
        if iteration < 0 or nodes < 0:
            raise ValueError(f"checkpoint field 'iteration' or 'nodes_touched' is negative: {iteration}, {nodes}")
        self.table, self.stream = table, Stream(int(state["rng"]))
        self.iteration, self.nodes_touched = iteration, nodes




def solve_openspiel(game: str, *, sampler: str = "external", iterations: int = 1000, epsilon: float = 0.6,
                    seed: int = 0) -> StateMCCFR:
    """Solve OpenSpiel game string `game` of any size by sampling through OpenSpiel's state API (`StateMCCFR`);
    returns the solver after `iterations` iterations (``.average_policy()``, ``.state_dict()``, ``.run(more)``).
    Games within the compile limit run about 100 times faster compiled: ``rcfr.load_game("openspiel:" + game)``."""
    check_int("iterations", iterations, 1)
    return StateMCCFR(game, sampler=sampler, epsilon=epsilon, seed=seed).run(iterations)
