"""The arrays a sampled traversal of the rules reads and writes, sized by the information sets met.

`RulesBuffers` is `rcfr.sampling.buffers.SamplerBuffers` for a `RulesGame`: the same `State` and `Scratch`,
with a `Rules` bundle where the compiled path has its `Tree`. Per-set arrays (the index, ``last``, the
touched list, cached actions) hold `set_capacity` sets and per-slot arrays (regrets, averages, current
strategy, sampled regrets) `seq_capacity` slots, each with room for one sink set past the end
(`rcfr.sampling.rules_source`); both double between iterations once half used. Under a `CodeAbstraction` the sets
met are abstract sets: regrets and averages are kept per abstract set. Fresh pages of ``np.zeros`` cost no
memory until written, and sets are written in the order met, so resident memory follows the sets met.
"""

from __future__ import annotations

import numpy as np

from ..compiler import _settle
from ..games.base import TERMINAL
from ..games.fast import ABSTRACT_CODE
from ..policy.rules import CodePolicy, normalized
from ..sources.abstraction import CodeAbstraction, no_abstraction
from ..sources.rules import RulesGame
from . import bundles, driver
from .buffers import CACHING, PUBLIC, SAMPLERS, public_work, seed_state
from .public import empty_public_tree
from .rules_source import (
    EMPTY,
    MISMATCH,
    NO_MISMATCH,
    OVERFLOW,
    SEQS,
    SETS,
    FastFunction,
    Rules,
    SetFreeRules,
    number_sets,
    reindex,
)
from .strategies import regret_weight

ROLES = {"fn_player": "player", "fn_moves": "num_children", "fn_child": "child", "fn_utility": "utility",
         "fn_code": "infoset_code"}
#: samplers whose walks need history ids (VR-MCCFR's baselines per history) or a public tree
UNSUPPORTED = ("baseline", PUBLIC)
PER_SET = ("last", "touched", "touched_stamp")
PER_SLOT = ("regrets", "avg", "sigma", "delta")
BASELINES = ("baseline", "baseline_visits")  # MCCFRb's, a row per traverser
SLOTS_PER_SET = 4  # slots the arrays start with per set of capacity (sets average 1.5-3 actions)


def root_facts(fast, root) -> tuple[int, int]:
    """The settled root's mover and number of moves (0 at a terminal), which the walks read per row."""
    who = int(fast.player(fast.data, root))
    return who, (0 if who == TERMINAL else int(fast.num_children(fast.data, root)))


class RulesBuffers:
    """Regret table, average sums, scratch and RNG of one sampler on a game walked by its rules; see the
    module docstring. `capacity` is the number of information sets the arrays start with."""

    #: checkpoint fields as long as what was met
    SIZED = ("regrets", "avg", "last", "codes", "num_actions", "signatures", "set_states", *BASELINES)
    #: information sets are numbered as met (a set not met yet has no strategy), the last id is the overflow's sink
    sets_as_met = True

    def __init__(self, game: RulesGame, sampler: str, seed: int = 0, capacity: int = 1 << 12,
                 chance_sampling: str = "single", abstraction: CodeAbstraction | None = None,
                 keep_states: bool = False, keep_table: bool = True, numbered: bool = True):
        if sampler in UNSUPPORTED or sampler not in SAMPLERS:
            allowed = [s for s in SAMPLERS if s not in UNSUPPORTED]
            raise ValueError(f"sampler {sampler!r} cannot walk a game by its rules (it needs the compiled tree's "
                             f"history ids); allowed: {', '.join(allowed)}")
        if isinstance(capacity, bool) or not isinstance(capacity, (int, np.integer)) or not 1 <= capacity <= 2**40:
            raise ValueError(f"capacity must be an integer in [1, 2**40], got {capacity!r}")
        self.game, self.sampler, self.abstraction = game, sampler, abstraction
        # sets numbered as met; without (`SetFreeRules`: the walks read and write nothing per set), every per-set
        # array holds the sink alone and every per-slot array its `widest` slots, whatever the walks meet
        self.numbered = bool(numbered)
        if not self.numbered and (keep_states or keep_table or abstraction is not None or sampler != "external"):
            raise ValueError("RulesBuffers(numbered=False) keeps nothing per set: it needs sampler='external', "
                             "keep_states=False, keep_table=False and no abstraction")
        self.keep_states = bool(keep_states)  # a state and player per set met (on-demand features)
        # a regret table and a current strategy per slot; without (sampled RCFR with its models evaluated in the
        # walk, `State.model`), ``regrets`` and ``sigma`` are empty: the walks read neither
        self.keep_table = bool(keep_table)
        fast = game.fast
        self.functions = {field: FastFunction(getattr(fast, role), role) for field, role in ROLES.items()}
        if abstraction is not None:
            abstraction.check_rules(game.rules, "RulesBuffers")
        self.functions["fn_abstract"] = FastFunction(no_abstraction if abstraction is None else abstraction.code,
                                                     ABSTRACT_CODE)
        self.abstract_data = fast.data if abstraction is None else abstraction.data
        self.abstract_out = np.zeros(0 if abstraction is None else 2, np.int64)
        D, widest = game.depth + 1, game.widest
        self.baselines = sampler == "infoset_baseline"  # MCCFRb: a row of baselines per traverser, per slot
        trajectory = sampler in ("outcome", "infoset_baseline")
        levels = 0 if trajectory else D + 1
        rows = D + 2 if trajectory else (levels + 1) * widest
        self.rows = np.zeros((rows, fast.width), np.int64)
        fast.initial(fast.data, self.rows[0])
        _settle(fast.player, fast.num_children, fast.child, fast.data, self.rows[0], np.empty(fast.width, np.int64))
        # each row's mover and number of moves (the walks' `child` notes them; the root's here) and set id
        self.row_player, self.row_moves = np.zeros(rows, np.int64), np.zeros(rows, np.int64)
        self.row_player[0], self.row_moves[0] = root_facts(fast, self.rows[0])
        self.row_set = np.full(rows, -1, np.int64)
        self.spare, self.probs = np.zeros(fast.width, np.int64), np.zeros(widest)
        self.meta = np.zeros(6, np.int64)
        self.rng, self.counters = seed_state(seed), np.zeros(2, np.int64)
        weights = sampler in ("average", "probing") or chance_sampling != "single"  # a scale per slot
        self.scratch_arrays = dict(
            path=np.zeros(D + 1 if trajectory else 0, bundles.PATH_DTYPE),
            stack=np.zeros((levels * (widest + 1) + 1, 3), np.int64),
            value=np.zeros((levels, widest)), reach=np.zeros((2, levels, widest)), chosen=np.zeros(levels, np.int64),
            scale=np.zeros((levels, widest) if weights else (0, 0)),
            common_u=np.zeros(0), common_stamp=np.zeros(0, np.int64), public=public_work(empty_public_tree()))
        sets = int(capacity) if self.numbered else 0
        self._allocate(sets, sets * SLOTS_PER_SET, {}, 0, 0)

    # ---- the arrays, and growing them ------------------------------------------------------------
    def _allocate(self, set_capacity: int, seq_capacity: int, old: dict, sets: int, seqs: int) -> None:
        """(Re)allocate every sized array for the capacities, keeping the first `sets` sets and `seqs` slots
        of `old` (name -> array), and rebuild the code table."""
        widest = self.game.widest

        def fresh(name, length, dtype=np.float64, used=0, shape=()):
            if not self.keep_table and name in ("regrets", "sigma"):
                return np.zeros(0, dtype)
            array = np.zeros((length, *shape), dtype)
            if name in old:
                array[:used] = old[name][:used]
            return array

        N, S = set_capacity + 1, seq_capacity + widest  # the sink set and its slots past the end
        index = {name: fresh(name, N, np.int64, sets)
                 for name in ("codes", "first_seq", "num_actions", "average_first", "signatures")}
        index["first_seq"][set_capacity] = index["average_first"][set_capacity] = seq_capacity
        self.row_set[:] = -1  # set ids noted by rows: a dropped call's new sets are numbered again
        width = self.game.fast.width + 1
        set_states = fresh("set_states", N if self.keep_states else 0, np.int64, sets, (width,))
        index["num_actions"][set_capacity] = widest
        entries = 1 << (2 * set_capacity - 1).bit_length()  # a power of two, at least twice the sets
        keys = np.full(entries, EMPTY, np.int64)
        ids = np.zeros(entries, np.int64)
        reindex(keys, ids, index["codes"], sets)
        self.meta[:] = (sets, seqs, set_capacity, seq_capacity, 0, NO_MISMATCH)
        self.index = index
        bundle = Rules if self.numbered else SetFreeRules  # (a numba type each: `infoset` looks up, or not)
        self.tree = bundle(**self.functions, data=self.game.fast.data, abstract_data=self.abstract_data,
                          abstract_out=self.abstract_out, states=self.rows, row_player=self.row_player,
                          row_moves=self.row_moves, row_set=self.row_set, spare=self.spare,
                          probs=self.probs, keys=keys, ids=ids, **index, meta=self.meta, set_states=set_states,
                          abstract=np.zeros(0, np.int64), parent_seq=np.zeros(0, np.int64),
                          baseline_index=np.zeros(0, np.int64), baseline_stride=S if self.baselines else 0,
                          chance_key=np.zeros((2, 0), np.int32), public=empty_public_tree())
        rows = 2 if self.baselines else 0

        def per_traverser(name, dtype):  # (rows, S) flattened: row i at i * S, the first `seqs` slots kept
            array = np.zeros(rows * S, dtype)
            if rows and name in old:
                before = old[name].reshape(rows, -1)
                array.reshape(rows, S)[:, :seqs] = before[:, :seqs]
            return array

        self.state = bundles.State(
            regrets=fresh("regrets", S, used=seqs), avg=fresh("avg", S, used=seqs),
            sigma=fresh("sigma", S, used=seqs), delta=np.zeros(S),
            touched=np.zeros(N, np.int64), num_touched=np.zeros(1, np.int64), touched_stamp=np.zeros(N, np.int64),
            last=fresh("last", N, used=sets), counters=self.counters, rng=self.rng,
            baseline=per_traverser("baseline", np.float64), baseline_visits=per_traverser("baseline_visits", np.int64))
        self.scratch = bundles.Scratch(
            cached=np.zeros((N if self.sampler in CACHING else 0, 2), np.int64), **self.scratch_arrays)

    def grow(self, factor: int = 2, both: bool = False) -> None:
        """Multiply by `factor` whichever capacity is half used, or `both` (numbering and values are kept)."""
        sets, seqs, set_capacity, seq_capacity = (int(v) for v in self.meta[:4])
        old = {**self.index, "set_states": self.tree.set_states,
               **{name: getattr(self.state, name) for name in (*PER_SLOT, *BASELINES, "last")}}
        self._allocate(set_capacity * (factor if both or 2 * sets > set_capacity else 1),
                       seq_capacity * (factor if both or 2 * seqs > seq_capacity else 1), old, sets, seqs)

    def advance(self, settings, t0: int, iterations: int) -> None:
        """Iterations t0+1 .. t0+iterations of the driver, growing the arrays whenever it returns for room.
        A call that still overflows (an iteration meeting more new sets than all before it) is undone and
        run again on arrays four times larger: it costs one call's work, never a wrong result."""
        done = 0
        while done < iterations:
            saved = self._snapshot()
            ran = driver.run(self.tree, self.state, self.scratch, settings, t0 + done, iterations - done)
            self._check_abstraction()
            if self.meta[OVERFLOW]:
                self._restore(saved)
                self.grow(4, both=True)
                continue
            if done + ran < iterations and ran:  # the next call starts at iteration t0 + done + ran + 1
                settings = settings._replace(regret_weight=regret_weight(
                    settings.regret_weight, t0 + done + 1, t0 + done + ran + 1, settings.regret_discount))
            done += ran
            if done < iterations:
                self.grow()

    def _check_abstraction(self) -> None:
        """The error an abstraction's bad code left in ``meta[MISMATCH]`` (the walk filed it under the sink)."""
        key = int(self.meta[MISMATCH])
        if key == NO_MISMATCH:
            return
        name = self.abstraction.name
        if key == -2:
            raise ValueError(f"abstraction {name!r} of {self.game.name} gave an abstract code outside [0, 2^62)")
        raise ValueError(f"abstraction {name!r} of {self.game.name} merges information sets with different legal "
                         f"actions (abstract code {key >> 1}, player {key & 1}): merged sets must have the same actions")

    def _snapshot(self) -> dict[str, np.ndarray]:
        """What a driver call changes of the sets met before it (new sets are appended, so dropping them is
        resetting the counts), and the counters and RNG."""
        sets, seqs = self.num_sets, self.num_slots
        saved = {name: getattr(self.state, name)[:seqs].copy() for name in ("regrets", "avg")}
        saved.update(last=self.state.last[:sets].copy(), counters=self.counters.copy(), rng=self.rng.copy(),
                     meta=self.meta.copy(), **{name: getattr(self.state, name).copy() for name in BASELINES})
        return saved

    def _restore(self, saved: dict[str, np.ndarray]) -> None:
        """Undo a driver call (see `_snapshot`); what the walks cache per traversal number is cleared, since
        those numbers come again."""
        state = self.state
        for name in ("regrets", "avg", "last"):
            target = getattr(state, name)
            target[:len(saved[name])] = saved[name]
            target[len(saved[name]):] = 0.0
        for name in BASELINES:
            getattr(state, name)[:] = saved[name]
        state.delta[:] = 0.0
        self.row_set[:] = -1  # rows may name sets the undone call numbered
        state.num_touched[0] = 0
        state.touched_stamp[:] = 0
        self.scratch.cached[:] = 0
        self.counters[:], self.rng[:] = saved["counters"], saved["rng"]
        self.meta[:] = saved["meta"]  # `grow` then rebuilds the code table from the sets kept

    def number(self, codes: np.ndarray, num_actions: np.ndarray, signatures: np.ndarray,
               set_states: np.ndarray) -> np.ndarray:
        """The ids of the sets of `codes`, numbering those not met yet in the order given (met elsewhere: the shards of
        a sampled batch), after growing the arrays to hold them all and at most half full after (`has_room`)."""
        sets, seqs = len(codes) + self.num_sets, int(np.sum(num_actions)) + self.num_slots
        while 2 * sets > int(self.meta[2]) or 2 * seqs > int(self.meta[3]):
            self.grow(2, both=True)
        states = np.ascontiguousarray(set_states, np.int64) if self.keep_states else np.zeros((len(codes), 0), np.int64)
        t = self.tree
        index = (t.keys, t.ids, t.codes, t.first_seq, t.num_actions, t.average_first, t.signatures)
        return number_sets(index, self.meta, t.set_states, np.ascontiguousarray(codes, np.int64),
                           np.ascontiguousarray(num_actions, np.int64), np.ascontiguousarray(signatures, np.int64), states)

    # ---- what callers read ---------------------------------------------------------------------
    @property
    def num_sets(self) -> int:
        return int(self.meta[SETS])

    @property
    def num_slots(self) -> int:
        return int(self.meta[SEQS])

    @property
    def num_set_ids(self) -> int:
        """Length of a per-set array: the set capacity and the sink past it."""
        return int(self.tree.first_seq.shape[0])

    @property
    def overflowed(self) -> bool:
        """Whether the last walk met more sets than the arrays hold (it filed them under the sink: `grow`)."""
        return bool(self.meta[OVERFLOW])

    @property
    def has_room(self) -> bool:
        """Whether both capacities are at most half used (the driver walks only then; else `grow`)."""
        sets, seqs, set_capacity, seq_capacity = (int(v) for v in self.meta[:4])
        return 2 * sets <= set_capacity and 2 * seqs <= seq_capacity

    @property
    def nodes_touched(self) -> int:
        return int(self.counters[bundles.C_NODES])

    def nbytes(self) -> int:
        """Bytes of the arrays sized by the sets met (their capacity: a bound on what is resident)."""
        arrays = [*self.index.values(), self.tree.keys, self.tree.ids, self.tree.set_states, *self.state, *self.scratch]
        return int(sum(a.nbytes for a in arrays if isinstance(a, np.ndarray)))

    def table(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(codes, first, values)`` of the sets met in code order: set k has code ``codes[k]`` and its
        per-action entries of `values` (a per-slot array) at ``values[first[k]:first[k + 1]]``."""
        sets = self.num_sets
        codes, first, n = self.index["codes"][:sets], self.index["first_seq"][:sets], self.index["num_actions"][:sets]
        order = np.argsort(codes, kind="stable")
        n = n[order]
        starts = np.zeros(sets + 1, np.int64)
        np.cumsum(n, out=starts[1:])
        gather = np.repeat(first[order] - starts[:-1], n) + np.arange(starts[-1])
        return codes[order].copy(), starts, values[gather]

    # ---- policies ------------------------------------------------------------------------------
    def policy(self, values: np.ndarray, positive: bool) -> CodePolicy:
        """A `CodePolicy` of the sets met from per-slot `values` (regret matching where `positive`, else
        normalized); sets never met play uniformly, as on the compiled tree."""
        codes, first, values = self.table(values)
        return CodePolicy(self.game.rules, codes, first, normalized(values, first, positive), self.abstraction,
                          default="uniform")

    def current_policy(self) -> CodePolicy:
        """Regret matching on the cumulative regrets of the sets met."""
        return self.policy(self.state.regrets, positive=True)

    def average_policy(self) -> CodePolicy:
        """The normalized average-strategy sums of the sets met (uniform where none yet)."""
        return self.policy(self.state.avg, positive=False)

    # ---- the visited-set discovery's walk (`rcfr.solvers.visited`) -----------------------------
    def discovery_rows(self) -> tuple[dict[str, np.ndarray], int]:
        """Rows of states for a walk beside the sampler's (twice as many, the root's copied: the discovery's
        external sampling walks apart from its stack), and the first row past the sampler's stack."""
        tree_rows = self.rows.shape[0]
        count = 2 * max(tree_rows, 3)
        states = np.zeros((count, self.rows.shape[1]), np.int64)
        states[0] = self.rows[0]
        row_player, row_moves = np.zeros(count, np.int64), np.zeros(count, np.int64)
        row_player[0], row_moves[0] = self.row_player[0], self.row_moves[0]
        rows = dict(states=states, row_player=row_player, row_moves=row_moves, row_set=np.full(count, -1, np.int64))
        return rows, max(tree_rows, 3)

    def discovery_tree(self, rows: dict[str, np.ndarray]) -> Rules:
        """The sampler's `Rules` bundle on the discovery's `rows`, their set ids forgotten (one a row noted may be
        the overflow's sink, renumbered since)."""
        rows["row_set"][:] = -1
        return self.tree._replace(**rows)

    # ---- checkpoints ---------------------------------------------------------------------------
    def state_dict(self) -> dict[str, np.ndarray]:
        sets, seqs = self.num_sets, self.num_slots
        out = {name: getattr(self.state, name)[:seqs].copy() for name in ("regrets", "avg")}
        out.update(last=self.state.last[:sets].copy(), counters=self.counters.copy(), rng=self.rng.copy(),
                   codes=self.index["codes"][:sets].copy(), num_actions=self.index["num_actions"][:sets].copy(),
                   signatures=self.index["signatures"][:sets].copy(), capacity=self.meta[2:4].copy())
        if self.keep_states:
            out["set_states"] = self.tree.set_states[:sets].copy()
        if self.baselines:  # each traverser's row, the slots met
            out.update({name: getattr(self.state, name).reshape(2, -1)[:, :seqs].copy() for name in BASELINES})
        return out

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        codes, n = np.asarray(state["codes"], np.int64), np.asarray(state["num_actions"], np.int64)
        signatures = np.asarray(state.get("signatures", np.zeros(len(codes), np.int64)), np.int64)
        sets, seqs = len(codes), int(n.sum())
        set_capacity, seq_capacity = (int(v) for v in state["capacity"])
        if (len(n) != sets or len(signatures) != sets or set_capacity < sets or seq_capacity < seqs
                or len(np.unique(codes)) != sets):
            raise ValueError("checkpoint's information-set index is inconsistent (codes, num_actions, signatures, capacity)")
        first = np.zeros(sets, np.int64)
        np.cumsum(n[:-1], out=first[1:])
        old = dict(codes=codes, num_actions=n, first_seq=first, average_first=first, signatures=signatures,
                   regrets=state["regrets"], avg=state["avg"], sigma=np.zeros(seqs), last=state["last"])
        for name, length in (("regrets", seqs), ("avg", seqs), ("last", sets)):
            if np.shape(state[name]) != (length,):
                raise ValueError(f"checkpoint field {name!r} has shape {np.shape(state[name])}, expected ({length},)")
        if self.keep_states:
            expected = (sets, self.game.fast.width + 1)
            if np.shape(state.get("set_states")) != expected:
                raise ValueError(f"checkpoint field 'set_states' has shape {np.shape(state.get('set_states'))}, "
                                 f"expected {expected}")
            old["set_states"] = np.asarray(state["set_states"], np.int64)
        if self.baselines:
            for name in BASELINES:
                if np.shape(state.get(name)) != (2, seqs):
                    raise ValueError(f"checkpoint field {name!r} has shape {np.shape(state.get(name))}, expected "
                                     f"(2, {seqs})")
                old[name] = np.asarray(state[name]).ravel()
        self.counters[:], self.rng[:] = state["counters"], state["rng"]
        self._allocate(set_capacity, seq_capacity, old, sets, seqs)
