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

Policies (`StatePolicy`) are keyed by information-state strings and OpenSpiel action ids, saved as
``.npz`` with the game string and OpenSpiel version as identity, and played by OpenSpiel's tools
through `StatePolicy.to_openspiel` (uniform at sets the run never met).
"""

from __future__ import annotations

import json
import os
import sys
import zipfile
from array import array
from pathlib import Path

import numpy as np

from ..errors import PolicyError
from ..files import atomic_write
from ..games.openspiel import canonical_name, load_openspiel_game, openspiel_version, pyspiel_module
from ..options import check_checkpoint, check_choice, check_float, check_int, check_seed

#: the walks of the state path, in the words of sampled RCFR's `sampler` option (rcfr.options.SAMPLERS)
SAMPLERS = ("external", "outcome")
SOLVER = "state-mccfr"
CHANCE = -1  # pyspiel.PlayerId.CHANCE; players are >= 0, every other negative id is terminal
MASK = (1 << 64) - 1
POLICY_FORMAT = "rcfr.state_policy"
POLICY_VERSION = 1
POLICY_FIELDS = ("format", "version", "game", "open_spiel", "players", "keys", "key_ends", "first", "actions",
                 "probs")


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


# ---- information sets as first met --------------------------------------------------------------
class InfosetTable:
    """Information sets in the order first met: ``index[player][key]`` is a set's row (OpenSpiel's strings
    do not name the player: Phantom Tic-Tac-Toe's first sets of both players read the same), ``players[row]``
    its player; its actions occupy slots
    ``first[row]`` .. ``first[row + 1]`` of the flat ``actions`` (OpenSpiel ids), ``regrets`` and ``avg``
    arrays (stdlib arrays: 8 bytes a slot, growing in place, read as numpy without a copy). Forced moves
    (one legal action) are not stored: as in the compiled tree, they are no decisions."""

    def __init__(self):
        self.index: tuple[dict[str, int], dict[str, int]] = ({}, {})
        self.players = array("b")
        self.first = array("q", [0])
        self.actions, self.regrets, self.avg = array("q"), array("d"), array("d")

    def add(self, player: int, key: str, legal) -> int:
        row = len(self.players)
        self.index[player][key] = row
        self.players.append(player)
        self.actions.extend(legal)
        zeros = [0.0] * len(legal)
        self.regrets.extend(zeros)
        self.avg.extend(zeros)
        self.first.append(len(self.actions))
        return row

    @property
    def num_sets(self) -> int:
        return len(self.players)

    def keys(self) -> list[tuple[int, str]]:
        """(player, information-state string) of each row, in row order."""
        keys = [None] * self.num_sets
        for player, index in enumerate(self.index):
            for key, row in index.items():
                keys[row] = (player, key)
        return keys

    def nbytes(self) -> int:
        """Bytes held: the dicts, their key strings and the arrays (what grows with the sets met)."""
        strings = sum(sys.getsizeof(k) for index in self.index for k in index)
        ints = sum(sys.getsizeof(v) for index in self.index for v in index.values() if v > 256)
        arrays = sum(a.buffer_info()[1] * a.itemsize
                     for a in (self.players, self.first, self.actions, self.regrets, self.avg))
        return sum(sys.getsizeof(index) for index in self.index) + strings + ints + arrays

    def state_dict(self) -> dict[str, np.ndarray]:
        keys = self.keys()
        blob, ends = pack_keys([k for _, k in keys])
        return {"keys": blob, "key_ends": ends, "players": np.array(self.players, np.int8),
                "first": np.array(self.first, np.int64),
                "actions": np.array(self.actions, np.int64), "regrets": np.array(self.regrets, np.float64),
                "avg": np.array(self.avg, np.float64)}

    @classmethod
    def from_state(cls, state: dict[str, np.ndarray]) -> "InfosetTable":
        table = cls()
        keys = unpack_keys(state["keys"], state["key_ends"])
        table.players = array("b", np.asarray(state["players"], np.int8).tolist())
        if len(table.players) != len(keys) or not set(table.players) <= {0, 1}:
            raise ValueError(f"checkpoint's information-set table has {len(keys)} keys and players "
                             f"{sorted(set(table.players))[:4]} for {len(table.players)} rows")
        for row, (player, key) in enumerate(zip(table.players, keys)):
            table.index[player][key] = row
        table.first = array("q", np.asarray(state["first"], np.int64).tolist())
        table.actions = array("q", np.asarray(state["actions"], np.int64).tolist())
        table.regrets = array("d", np.asarray(state["regrets"], np.float64).tobytes())
        table.avg = array("d", np.asarray(state["avg"], np.float64).tobytes())
        slots = len(table.actions)
        if (len(table.first) != len(keys) + 1 or table.first[-1] != slots or len(table.regrets) != slots
                or len(table.avg) != slots):
            raise ValueError(f"checkpoint's information-set table is inconsistent: {len(keys)} keys, "
                             f"{len(table.first)} offsets, {slots} actions, {len(table.regrets)} regrets")
        return table


def pack_keys(keys: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Strings as one UTF-8 byte array and the end offset of each (no pickling, any characters)."""
    encoded = [k.encode() for k in keys]
    ends = np.cumsum([len(b) for b in encoded], dtype=np.int64)
    return np.frombuffer(b"".join(encoded), np.uint8).copy(), ends


def unpack_keys(blob: np.ndarray, ends: np.ndarray) -> list[str]:
    data, ends = np.asarray(blob, np.uint8).tobytes(), np.asarray(ends, np.int64).tolist()
    starts = [0] + ends[:-1]
    return [data[s:e].decode() for s, e in zip(starts, ends)]


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
        regrets, avg, first, actions_of, index = table.regrets, table.avg, table.first, table.actions, table.index
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
                key = state.information_state_string(player)
                row = index[player].get(key)
                if row is None:
                    legal = state.legal_actions()
                    if len(legal) == 1:
                        state.apply_action(legal[0])
                        continue
                    row = table.add(player, key, legal)  # the arrays grow in place
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
        regrets, avg, first, actions_of, index = table.regrets, table.avg, table.first, table.actions, table.index
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
            key = state.information_state_string(player)
            row = index[player].get(key)
            if row is None:
                legal = state.legal_actions()
                if len(legal) == 1:
                    state.apply_action(legal[0])
                    continue
                row = table.add(player, key, legal)  # the arrays grow in place
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


def rows(values: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Each row ``values[first[k]:first[k + 1]]`` over its sum, uniform where the sum is zero."""
    n = np.diff(first)
    if len(n) == 0:
        return np.zeros(0)
    totals = np.repeat(np.add.reduceat(values, first[:-1]), n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(totals > 0.0, values / totals, np.repeat(1.0 / n, n))


def solve_openspiel(game: str, *, sampler: str = "external", iterations: int = 1000, epsilon: float = 0.6,
                    seed: int = 0) -> StateMCCFR:
    """Solve OpenSpiel game string `game` of any size by sampling through OpenSpiel's state API (`StateMCCFR`);
    returns the solver after `iterations` iterations (``.average_policy()``, ``.state_dict()``, ``.run(more)``).
    Games within the compile limit run about 100 times faster compiled: ``rcfr.load_game("openspiel:" + game)``."""
    check_int("iterations", iterations, 1)
    return StateMCCFR(game, sampler=sampler, epsilon=epsilon, seed=seed).run(iterations)


# ---- policies keyed by information-state string ------------------------------------------------
class StatePolicy:
    """A policy of an OpenSpiel game keyed by (player, information-state string): sorted ``keys``, ``first``
    offsets (``len(keys) + 1``) into flat ``actions`` (OpenSpiel ids) and float64 ``probs``; ``policy[player,
    string]`` is a row as {action id: probability}. Identity: the game's canonical string and the OpenSpiel
    version (information-state strings may change between versions)."""

    def __init__(self, game: str, version: str, keys: list[tuple[int, str]], first, actions, probs):
        self.game_string, self.version, self.keys = game, version, keys
        self.first = np.asarray(first, np.int64)
        self.actions, self.probs = np.asarray(actions, np.int64), np.asarray(probs, np.float64)
        self.row = ({}, {})
        for i, (player, key) in enumerate(keys):
            self.row[player][key] = i

    @classmethod
    def from_rows(cls, game, version, keys, first, actions, probs) -> "StatePolicy":
        """A policy from rows in any order (sorted here by key)."""
        order = np.array(sorted(range(len(keys)), key=keys.__getitem__), np.int64)
        n = np.diff(first)[order]
        start = np.concatenate([[0], np.cumsum(n)]).astype(np.int64)
        slots = np.arange(start[-1]) - np.repeat(start[:-1], n) + np.repeat(np.asarray(first)[order], n)
        return cls(game, version, [keys[i] for i in order], start, actions[slots], probs[slots])

    @property
    def num_sets(self) -> int:
        return len(self.keys)

    def __getitem__(self, item: tuple[int, str]) -> dict[int, float]:
        """Action id -> probability at player `item[0]`'s information set of string `item[1]`."""
        player, key = item
        i = self.row[player][key]
        s, e = self.first[i], self.first[i + 1]
        return dict(zip(self.actions[s:e].tolist(), self.probs[s:e].tolist()))

    def __contains__(self, item: tuple[int, str]) -> bool:
        return item[1] in self.row[item[0]]

    def save(self, path: str | os.PathLike) -> None:
        """Write the ``.npz`` file atomically (a reader never sees half a file)."""
        _npz_suffix(path)
        blob, ends = pack_keys([k for _, k in self.keys])
        arrays = {"format": np.array(POLICY_FORMAT), "version": np.array(POLICY_VERSION),
                  "game": np.array(self.game_string), "open_spiel": np.array(self.version),
                  "players": np.array([p for p, _ in self.keys], np.int8), "keys": blob,
                  "key_ends": ends, "first": self.first, "actions": self.actions, "probs": self.probs}
        atomic_write(path, lambda f: np.savez(f, **arrays))

    @classmethod
    def load(cls, path: str | os.PathLike, game: str) -> "StatePolicy":
        """Read a file `save` wrote for OpenSpiel game string `game` (checked against the file's game and
        OpenSpiel version)."""
        _npz_suffix(path)
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
        except (ValueError, EOFError, OSError, zipfile.BadZipFile) as err:
            raise PolicyError(f"{path}: not a readable .npz state policy ({str(err)[:80]})") from None
        if sorted(arrays) != sorted(POLICY_FIELDS):
            raise PolicyError(f"{path}: a state policy has the fields {', '.join(POLICY_FIELDS)}; "
                              f"got {', '.join(sorted(arrays))[:200]}")
        if str(arrays["format"]) != POLICY_FORMAT or int(arrays["version"]) != POLICY_VERSION:
            raise PolicyError(f"{path}: format {str(arrays['format'])[:40]!r} version {arrays['version']}, "
                              f"expected {POLICY_FORMAT!r} version {POLICY_VERSION}")
        want = {"game": canonical_name(load_openspiel_game(game)), "open_spiel": openspiel_version()}
        for field, value in want.items():
            if str(arrays[field]) != value:
                raise PolicyError(f"{path}: field {field!r} is {str(arrays[field])[:200]!r}, expected {value!r}")
        keys = unpack_keys(arrays["keys"], arrays["key_ends"])
        players = arrays["players"].tolist()
        if len(players) != len(keys) or not set(players) <= {0, 1}:
            raise PolicyError(f"{path}: 'players' must hold 0 or 1 for each of the {len(keys)} keys")
        policy = cls(want["game"], want["open_spiel"], list(zip(players, keys)), arrays["first"], arrays["actions"],
                     arrays["probs"])
        _check_rows(path, policy)
        return policy

    def to_openspiel(self, game=None):
        """This policy as an OpenSpiel `open_spiel.python.policy.Policy` (default: of a freshly loaded game)."""
        return openspiel_policy(self, game)


def _npz_suffix(path) -> None:
    if Path(path).suffix.lower() != ".npz":
        raise ValueError(f"state policy file {str(path)!r}: the suffix must be .npz, "
                         f"got {Path(path).suffix or 'none'!r}")


def _check_rows(path, policy: StatePolicy) -> None:
    """Offsets that cut ``actions``/``probs`` into rows, sorted unique keys, rows summing to one."""
    first, n = policy.first, len(policy.probs)
    if (len(first) != len(policy.keys) + 1 or first[0] != 0 or first[-1] != n or np.any(np.diff(first) < 1)
            or len(policy.actions) != n):
        raise PolicyError(f"{path}: 'first' must rise from 0 to {n} in {len(policy.keys) + 1} steps")
    if any(a >= b for a, b in zip(policy.keys, policy.keys[1:])):
        raise PolicyError(f"{path}: 'keys' must be sorted and unique")
    sums = np.add.reduceat(policy.probs, first[:-1]) if n else np.zeros(0)
    if not (np.all(np.isfinite(policy.probs)) and np.all(policy.probs >= 0) and np.allclose(sums, 1.0, atol=1e-9)):
        raise PolicyError(f"{path}: every row of 'probs' must be non-negative and sum to one")


def openspiel_policy(policy: StatePolicy, game=None):
    """`policy` as an instance of OpenSpiel's `Policy` class for `game` (a pyspiel game of the same string)."""
    pyspiel_module()
    from open_spiel.python.policy import Policy as OpenSpielPolicy

    class _StatePolicy(OpenSpielPolicy):
        """Looks each state's information-state string up in a `StatePolicy`; uniform over the legal
        actions where the run never met the set (counted in ``unmet``)."""

        def __init__(self, os_game, table):
            super().__init__(os_game, list(range(os_game.num_players())))
            self.table, self.unmet = table, 0

        def action_probabilities(self, state, player_id=None):
            player = state.current_player() if player_id is None else player_id
            key = (player, state.information_state_string(player))
            if key in self.table:
                return self.table[key]
            self.unmet += 1
            legal = state.legal_actions(player)
            return {a: 1.0 / len(legal) for a in legal}

    os_game = load_openspiel_game(policy.game_string) if game is None else game
    if canonical_name(os_game) != policy.game_string:
        raise ValueError(f"policy of {policy.game_string!r} cannot play {canonical_name(os_game)!r}")
    return _StatePolicy(os_game, policy)
