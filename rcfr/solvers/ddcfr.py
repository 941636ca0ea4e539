"""DDCFR (Xu, Li, Fu, Fu, Xing & Cheng, ICLR 2024): Discounted CFR whose parameters are chosen while it runs.

Every `tau` iterations a small policy looks at two numbers, the normalized iteration t / T and the
normalized log exploitability of the average policy,

    progress = min(t / T, 1),   frac = (log10 E_t - log10 E_min) / (log10 E_0 - log10 E_min),

(E_0 the exploitability of the starting, uniform average; E_min = 1e-12, the floor of every exploitability
here) and answers with DCFR's alpha in [0, 5], beta in [-5, 0] and gamma in [0, 5] and the number of
iterations tau in {1, 2, 5, 10, 20} they are kept for. Within a block the update is DCFR's as the paper's
code writes it: R^t = R^{t-1} d(t-1) + r^t with d(s) = s^alpha / (s^alpha + 1) where R^{t-1} > 0 and
s^beta / (s^beta + 1) elsewhere, regret matching on R^t, and the average C^t = C^{t-1} ((t-1)/t)^gamma +
(iteration t's plan). With constant parameters this is `dcfr`: the same regrets and strategies bit for bit, the
same average to rounding (dcfr weights iteration t by t^gamma exactly).

The policy is a one-hidden-layer network (`DiscountPolicy`), its weights shipped as data
(`rcfr/solvers/data/ddcfr_policy.json`, trained by ``python -m benchmarks.studies.ddcfr_train``) and checked on
load: format, version, shapes, finiteness and a SHA-256 fingerprint of the numbers. The observation needs the
exact exploitability of the average policy once per block (one best-response evaluation each), which is what
the paper does too.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..evaluation import exploitability
from ..options import UPDATES, Options, check_choice, check_float, check_int
from ..tree import Game
from .cfr import CFRSolver
from .stores import DiscountedTable, weight

#: the shipped, trained policy
POLICY_FILE = Path(__file__).resolve().parent / "data" / "ddcfr_policy.json"
FORMAT, VERSION = "rcfr-ddcfr-policy", 1
#: the action space (the paper's): each parameter's range, and the durations tau to choose from
RANGES = {"alpha": (0.0, 5.0), "beta": (-5.0, 0.0), "gamma": (0.0, 5.0)}
TAUS = (1, 2, 5, 10, 20)
#: log10 of the exploitability floor E_min of the observation
LOG_FLOOR = -12.0


class SchedulePolicy(Protocol):
    """What ddcfr asks of a policy: parameters for an observation, and a fingerprint a checkpoint records."""

    fingerprint: str

    def act(self, progress: float, frac: float) -> tuple[float, float, float, int]: ...


def observation(iteration: int, horizon: int, log_exploitability: float, log_start: float) -> tuple[float, float]:
    """(progress, frac) at `iteration` (iterations done) for a run planned over `horizon` iterations; both logs
    base 10 and already floored at LOG_FLOOR. frac is 0 when the start itself is at the floor."""
    span = log_start - LOG_FLOOR
    frac = (log_exploitability - LOG_FLOOR) / span if span > 0 else 0.0
    return min(iteration / horizon, 1.0), frac


def log_exploitability(value: float) -> float:
    """log10 of an exploitability floored at 10 ** LOG_FLOOR (rounding can make an exact one negative)."""
    return math.log10(max(float(value), 10.0 ** LOG_FLOOR))


def _scale(z: np.ndarray) -> tuple[float, float, float]:
    out = []
    for value, (low, high) in zip(np.tanh(z), RANGES.values()):
        out.append(float((low + high) / 2 + (high - low) / 2 * value))
    return out[0], out[1], out[2]


class DiscountPolicy:
    """inputs (progress, frac) -> hidden = tanh(W1 x + b1) -> z = W2 hidden + b2; the first three entries of z
    give alpha, beta, gamma (tanh, scaled to `RANGES`), the last five are logits over `TAUS` (argmax)."""

    def __init__(self, w1, b1, w2, b2):
        arrays = [np.array(a, dtype=np.float64) for a in (w1, b1, w2, b2)]
        w1, b1, w2, b2 = arrays
        hidden = w1.shape[0] if w1.ndim == 2 else -1
        outputs = 3 + len(TAUS)
        expected = {"w1": (hidden, 2), "b1": (hidden,), "w2": (outputs, hidden), "b2": (outputs,)}
        for (name, shape), array in zip(expected.items(), arrays):
            if hidden < 1 or array.shape != shape:
                raise ValueError(f"ddcfr policy weights {name} has shape {list(array.shape)}, expected "
                                 f"{list(shape) if hidden >= 1 else '[hidden >= 1, 2]'}")
            if not np.isfinite(array).all():
                raise ValueError(f"ddcfr policy weights {name} holds non-finite numbers")
        self.w1, self.b1, self.w2, self.b2 = w1, b1, w2, b2
        self.hidden = hidden
        self.fingerprint = _fingerprint(self.weights())

    # ---- the numbers ---------------------------------------------------------------------------------
    def weights(self) -> dict[str, list]:
        return {"w1": self.w1.tolist(), "b1": self.b1.tolist(), "w2": self.w2.tolist(), "b2": self.b2.tolist()}

    def vector(self) -> np.ndarray:
        return np.concatenate([a.ravel() for a in (self.w1, self.b1, self.w2, self.b2)])

    @classmethod
    def from_vector(cls, vector: np.ndarray, hidden: int) -> DiscountPolicy:
        outputs = 3 + len(TAUS)
        sizes = [hidden * 2, hidden, outputs * hidden, outputs]
        if len(vector) != sum(sizes):
            raise ValueError(f"a ddcfr policy with {hidden} hidden units has {sum(sizes)} numbers, got {len(vector)}")
        parts = np.split(np.asarray(vector, dtype=np.float64), np.cumsum(sizes)[:-1])
        return cls(parts[0].reshape(hidden, 2), parts[1], parts[2].reshape(outputs, hidden), parts[3])

    @staticmethod
    def size(hidden: int) -> int:
        return hidden * 2 + hidden + (3 + len(TAUS)) * (hidden + 1)

    # ---- acting --------------------------------------------------------------------------------------
    def act(self, progress: float, frac: float) -> tuple[float, float, float, int]:
        hidden = np.tanh(self.w1 @ np.array([progress, frac]) + self.b1)
        z = self.w2 @ hidden + self.b2
        alpha, beta, gamma = _scale(z[:3])
        return alpha, beta, gamma, TAUS[int(np.argmax(z[3:]))]

    # ---- files ---------------------------------------------------------------------------------------
    def to_dict(self, training: dict | None = None) -> dict[str, Any]:
        data = {"format": FORMAT, "version": VERSION, **_architecture(self.hidden), "weights": self.weights(),
                "sha256": self.fingerprint}
        if training is not None:
            data["training"] = training
        return data

    @classmethod
    def from_dict(cls, data: Any, source: str = "ddcfr policy") -> DiscountPolicy:
        """The policy of a file's contents, verified: format and version, the architecture and action space
        this code implements, shapes, finite numbers, and the fingerprint of the numbers."""
        if not isinstance(data, dict):
            raise ValueError(f"{source}: expected a JSON object, got {type(data).__name__}")
        if data.get("format") != FORMAT or data.get("version") != VERSION:
            raise ValueError(f"{source}: format {data.get('format')!r} version {data.get('version')!r}, expected "
                             f"{FORMAT!r} version {VERSION}")
        weights = data.get("weights")
        if not isinstance(weights, dict) or set(weights) != {"w1", "b1", "w2", "b2"}:
            raise ValueError(f"{source}: 'weights' must hold exactly w1, b1, w2, b2")
        try:
            policy = cls(weights["w1"], weights["b1"], weights["w2"], weights["b2"])
        except (TypeError, ValueError) as err:
            raise ValueError(f"{source}: {err}") from None
        expected = _architecture(policy.hidden)
        for key, value in expected.items():
            if data.get(key) != value:
                raise ValueError(f"{source}: {key} is {data.get(key)!r}; this version of rcfr implements {value!r}")
        if data.get("sha256") != policy.fingerprint:
            raise ValueError(f"{source}: the weights' SHA-256 is {policy.fingerprint}, the file says "
                             f"{data.get('sha256')!r}: the file is corrupted or was edited")
        return policy

    @classmethod
    def load(cls, path: str | Path = POLICY_FILE) -> DiscountPolicy:
        path = Path(path)
        try:
            data = json.loads(path.read_text())
        except OSError as err:
            raise ValueError(f"cannot read the ddcfr policy {str(path)!r}: {err.strerror or err}") from None
        except ValueError as err:
            raise ValueError(f"ddcfr policy {str(path)!r} is not JSON: {err}") from None
        policy = cls.from_dict(data, f"ddcfr policy {str(path)!r}")
        policy.training = data.get("training")
        return policy

    def __repr__(self) -> str:
        return f"DiscountPolicy(hidden={self.hidden}, sha256:{self.fingerprint[:16]})"


@dataclass(frozen=True)
class ConstantPolicy:
    """Always the same parameters (DCFR's by default): ddcfr with it is DCFR, which the tests use."""

    alpha: float = 1.5
    beta: float = 0.0
    gamma: float = 2.0
    tau: int = 1

    def __post_init__(self):
        for name in ("alpha", "beta", "gamma"):
            low, high = RANGES[name]
            object.__setattr__(self, name, check_float(f"ConstantPolicy {name}", getattr(self, name), low, high))
        check_choice("ConstantPolicy tau", self.tau, TAUS)

    @property
    def fingerprint(self) -> str:
        return f"constant {self.alpha!r} {self.beta!r} {self.gamma!r} {self.tau!r}"

    def act(self, progress: float, frac: float) -> tuple[float, float, float, int]:
        return self.alpha, self.beta, self.gamma, self.tau


def _architecture(hidden: int) -> dict[str, Any]:
    return {"inputs": ["progress", "frac"], "hidden": hidden, "activation": "tanh",
            "outputs": ["alpha", "beta", "gamma"] + [f"tau={t}" for t in TAUS],
            "ranges": {k: list(v) for k, v in RANGES.items()}, "taus": list(TAUS), "log_floor": LOG_FLOOR}


def _fingerprint(weights: dict[str, list]) -> str:
    text = json.dumps({"architecture": _architecture(len(weights["b1"])), "weights": weights}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


_SHIPPED: DiscountPolicy | None = None


def shipped_policy() -> DiscountPolicy:
    """The trained policy that ships with rcfr (loaded and verified once)."""
    global _SHIPPED
    if _SHIPPED is None:
        _SHIPPED = DiscountPolicy.load(POLICY_FILE)
    return _SHIPPED


def check_policy(value: Any) -> SchedulePolicy:
    """None (the shipped policy), a path to a policy file, or an object with `act` and `fingerprint`."""
    if value is None:
        return shipped_policy()
    if isinstance(value, (str, Path)):
        return DiscountPolicy.load(value)
    if not callable(getattr(value, "act", None)) or not isinstance(getattr(value, "fingerprint", None), str):
        raise ValueError(f"policy must be None (the shipped one), a policy file's path, or a DiscountPolicy / "
                         f"ConstantPolicy, got {type(value).__name__} {value!r:.60}")
    return value


class DynamicDiscountTable(DiscountedTable):
    """DCFR's regrets, discounted before each addition by the current `alpha` / `beta` (set from outside at
    each decision): R^t = R^{t-1} d(t-1) + r^t by sign. The next strategy is regret matching on R^t's positive
    entries scaled by d_alpha(t) > 0, the same strategy as on R^t (regret matching is scale free) computed with
    the operations `dcfr` uses (it matches (R^{t-1} d(t-1) + r^t) d(t)), so constant parameters give its iterates
    bit for bit."""

    def __init__(self, alpha: float = 1.5, beta: float = 0.0):
        super().__init__(alpha=alpha, beta=beta, plus=False)

    def bind(self, game: Game) -> None:
        super().bind(game)
        self._scaled = [np.zeros(v.num_sequences) for v in self.views]

    def update(self, player: int, regrets: np.ndarray, iteration: int) -> None:
        total = self.regrets[player]
        self._discount(total, iteration - 1)
        total += regrets
        scaled = np.multiply(total, weight(iteration, self.alpha), out=self._scaled[player])
        self._match(scaled, self.views[player], self._strategies[player])


@dataclass(frozen=True)
class DDCFROptions(Options):
    """ddcfr's options: the planned number of iterations T (the observation's t / T: required), the update
    schedule and the policy (recorded by its fingerprint)."""

    horizon: int | None = None
    updates: str = "alternating"
    policy: Any = None

    def __post_init__(self):
        if self.horizon is None:
            raise ValueError("ddcfr needs horizon=T, the number of iterations it plans for (its policy observes "
                             "t / T); set it to the run's length, e.g. make_solver('ddcfr', game, horizon=1000)")
        object.__setattr__(self, "horizon", check_int("horizon (the planned number of iterations T)",
                                                      self.horizon, 1))
        check_choice("updates", self.updates, UPDATES)
        object.__setattr__(self, "policy", check_policy(self.policy))

    @property
    def power(self) -> float:
        """Unused: ddcfr's average weights follow the policy's gamma (`DDCFR._average`)."""
        return 0.0

    def description(self) -> dict[str, Any]:
        return {"horizon": self.horizon, "updates": self.updates, "policy": self.policy.fingerprint}


class DDCFR(CFRSolver):
    """Dynamic discounted CFR: DCFR with (alpha, beta, gamma) chosen every tau iterations by `policy` (None: the
    shipped trained one; or a file's path, a `DiscountPolicy`, a `ConstantPolicy`) from the normalized iteration
    and log exploitability. `horizon` is the planned number of iterations T (required); past it the observed
    progress stays 1. `decisions` lists, since construction or the last resume, each decision's iteration (the
    iterations done), exploitability, alpha, beta, gamma and tau; `evaluations` counts the exploitability
    evaluations of the whole run (one per decision)."""

    solver_name = "ddcfr"

    def __init__(self, game: Game, *, horizon: int | None = None, policy: Any = None, updates: str = "alternating"):
        options = DDCFROptions(horizon=horizon, updates=updates, policy=policy)
        self.table = DynamicDiscountTable()  # alpha and beta: set by each decision
        super().__init__(game, self.table, options=options)
        self.policy, self.horizon = options.policy, options.horizon
        self.gamma = 2.0
        self.block_end = 0  # the iteration that ends the current block (0: none yet)
        self.log_start = 0.0  # log10 E_0, set at the first decision
        self.evaluations = 0
        self.decisions: list[dict[str, float]] = []

    def _decide(self) -> None:
        done = self.iteration
        value = exploitability(self.game, self.average_policy())
        self.evaluations += 1
        log_value = log_exploitability(value)
        if done == 0:
            self.log_start = log_value
        alpha, beta, gamma, tau = self.policy.act(*observation(done, self.horizon, log_value, self.log_start))
        for name, x in zip(("alpha", "beta", "gamma"), (alpha, beta, gamma)):
            low, high = RANGES[name]
            check_float(f"{name} from the ddcfr policy", x, low, high)
        tau = check_choice("tau from the ddcfr policy", tau, TAUS)
        self.table.alpha, self.table.beta, self.gamma = float(alpha), float(beta), float(gamma)
        self.block_end = done + int(tau)
        self.decisions.append({"iteration": done, "exploitability": value, "alpha": float(alpha),
                               "beta": float(beta), "gamma": float(gamma), "tau": int(tau)})

    def _iterate_once(self) -> None:
        if self.iteration >= self.block_end:
            self._decide()
        super()._iterate_once()

    def _average(self, player: int, plan: np.ndarray, t: int) -> None:
        self.average_plans[player] *= ((t - 1) / t) ** self.gamma
        self.average_plans[player] += plan

    def _state(self) -> dict[str, np.ndarray]:
        state = super()._state()
        state["ddcfr.parameters"] = np.array([self.table.alpha, self.table.beta, self.gamma])
        state["ddcfr.block_end"] = np.array(self.block_end)
        state["ddcfr.log_start"] = np.array(self.log_start)
        state["ddcfr.evaluations"] = np.array(self.evaluations)
        return state

    def _load_state(self, state: dict[str, np.ndarray]) -> None:
        alpha, beta, gamma = (float(x) for x in state["ddcfr.parameters"])
        for name, x in (("alpha", alpha), ("beta", beta), ("gamma", gamma)):
            check_float(f"checkpoint field 'ddcfr.parameters' ({name})", x, *RANGES[name])
        block_end = check_int("checkpoint field 'ddcfr.block_end'", int(state["ddcfr.block_end"]), 0)
        super()._load_state(state)
        self.table.alpha, self.table.beta, self.gamma = alpha, beta, gamma
        self.block_end = block_end
        self.log_start = float(state["ddcfr.log_start"])
        self.evaluations = int(state["ddcfr.evaluations"])
        self.decisions = []
