"""The vocabulary of the options, its allowed values and ranges, and the ``check_*`` family that refuses a bad
value before any work with a message naming the field and what is allowed (the style of `rcfr.registry`
and the experiment kit)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, Iterable

import numpy as np

# ---- the vocabulary ------------------------------------------------------------------------------------
REGRET_MATCHING = ("rm", "rm+")  # regret matching, or regret-matching+ (clipped, Q-regrets)
UPDATES = ("alternating", "simultaneous")
AVERAGING = {"uniform": 0.0, "linear": 1.0, "quadratic": 2.0}  # iteration t's weight t ** power
AVERAGE_SPACES = ("full", "abstract")
AVERAGE_MODES = ("stochastic", "optimistic", "lazy")
TARGETS = ("stored", "bootstrap")  # full-width RCFR and RRM
SAMPLED_TARGETS = ("stored", "bootstrap", "reservoir", "rows")  # sampled RCFR
LEAN_TARGETS = ("stored", "reservoir", "rows", "bootstrap")  # lean sampled RCFR (the last two: profile="model")
SELECTIONS = ("recent", "uniform")  # which stored targets a bounded fit trains on
SAMPLERS = ("external", "outcome", "probing")  # sampled RCFR's samplers
CHANCE_SAMPLING = ("single", "paired", "common", "all")
PUBLIC_CHANCE = ("sample", "enumerate")
BASELINES = ("da", "eda", "none")  # MCCFRb's information-set baselines
PROFILES = ("cache", "visited", "model")  # where the lean path's current strategies come from
MODEL_SAMPLERS = ("external", "outcome")  # the samplers whose walks evaluate the models themselves (profile="model")
AVERAGES = ("sums", "mixture")  # the lean path's average strategy: per-sequence sums, or a mixture of kept models

#: the largest averaging power (and discount power): t ** power stays finite for t up to 10 ** 15
MAX_POWER = 20.0
#: the cap of the adaptive asymmetry of APCFR+ (Meng et al. 2026): the prediction's step is at least 1 / (1 + 5)
ASYMMETRY_MAX = 5.0
#: the largest average-strategy-sampling tau and beta: tau x an average-strategy sum stays finite
MAX_SCALE = 1e100
#: seeds: a regressor gets ``2 * seed + player`` as its 32-bit ``random_state`` (the kit's bound too)
MAX_SEED = 2 ** 30 - 1

#: what `rcfr.options` hands out from here
__all__ = [
    "REGRET_MATCHING", "UPDATES", "AVERAGING", "AVERAGE_SPACES", "AVERAGE_MODES", "TARGETS", "SAMPLED_TARGETS",
    "LEAN_TARGETS", "SELECTIONS", "SAMPLERS", "CHANCE_SAMPLING", "PUBLIC_CHANCE", "BASELINES", "PROFILES",
    "MODEL_SAMPLERS", "AVERAGES", "MAX_POWER", "ASYMMETRY_MAX", "MAX_SCALE", "MAX_SEED", "did_you_mean", "check_choice",
    "check_bool", "check_int", "check_checkpoint", "check_seed", "check_float", "Linear", "check_power",
    "check_asymmetry", "check_discount", "check_weights"
]


# ---- the check family ----------------------------------------------------------------------------------
def _listing(allowed: Iterable[Any]) -> str:
    return ", ".join(map(str, allowed))


def _same(value, option) -> bool:
    """`value == option`, but never True for a bool against a number, nor an error for an array."""
    if isinstance(value, np.ndarray) or isinstance(value, (bool, np.bool_)) != isinstance(option, bool):
        return False
    try:
        return bool(value == option)
    except (TypeError, ValueError):
        return False


def did_you_mean(value: Any, allowed: Iterable[Any]) -> str:
    """" (did you mean 'x'?)" for the allowed name closest to `value` (difflib), or "" when none is close."""
    import difflib
    close = difflib.get_close_matches(str(value), [str(a) for a in allowed], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_choice(field: str, value: Any, allowed: Iterable[Any]) -> Any:
    """`value` if it is one of `allowed`, else ``ValueError: unknown <field> <value>; allowed: ...``."""
    allowed = list(allowed)
    if not any(_same(value, option) for option in allowed):
        raise ValueError(f"unknown {field} {value!r}; allowed: {_listing(allowed)}")
    return value


def check_bool(field: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{field} must be True or False, got {value!r}")
    return bool(value)


def check_int(field: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    """An integer (not a bool, not a float) in [low, high]."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Integral) or (
            low is not None and int(value) < low) or (high is not None and int(value) > high):
        if high is None:
            bound = f" >= {low}" if low is not None else ""
        else:
            bound = f" in [{low}, {high:,}]" if low is not None else f" <= {high:,}"
        raise ValueError(f"{field} must be an integer{bound}, got {value!r}")
    return int(value)


def check_checkpoint(value: Any) -> Mapping:
    """`value` if it is a mapping (a dict, an opened .npz), as a checkpoint is, else a TypeError."""
    if not isinstance(value, Mapping):
        raise TypeError(f"state must be a mapping of field names to arrays, as state_dict() returns (or np.load of "
                        f"a saved one), got {type(value).__name__}")
    return value


def check_seed(field: str, value: Any) -> int:
    return check_int(field, value, 0, MAX_SEED)


def check_float(field: str, value: Any, low: float = -math.inf, high: float = math.inf, *,
                low_open: bool = False, high_open: bool = False) -> float:
    """A finite real number (not a bool, NaN or +-inf) in the interval from `low` to `high`."""
    ok = not isinstance(value, (bool, np.bool_)) and isinstance(value, Real)
    if ok:
        try:
            x = float(value)
        except OverflowError:  # an integer beyond any float (10 ** 400)
            x = math.inf
        ok = math.isfinite(x) and (x > low if low_open else x >= low) and (x < high if high_open else x <= high)
    if not ok:
        left, right = "(" if low_open or low == -math.inf else "[", ")" if high_open or high == math.inf else "]"
        raise ValueError(f"{field} must be a finite number in {left}{low:g}, {high:g}{right}, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class Linear:
    """A hyperparameter moving linearly from `start` to `end` over a planned `horizon` of iterations
    (Zhang et al. 2024's schedules): its value at 0-based iteration index s is
    start + (end - start) * min(s / horizon, 1); past the horizon it stays at `end`."""

    start: float
    end: float
    horizon: int

    def __post_init__(self):
        for name in ("start", "end"):
            object.__setattr__(self, name, check_float(f"schedule {name}", getattr(self, name)))
        object.__setattr__(self, "horizon", check_int("horizon (the planned number of iterations)",
                                                      self.horizon, 1))

    def __call__(self, index: int) -> float:
        return self.start + (self.end - self.start) * min(index / self.horizon, 1.0)


def check_power(field: str, value: Any) -> float | Linear:
    """An averaging weight: a name of `AVERAGING`, a power in [0, MAX_POWER], or a `Linear` schedule of
    non-negative powers (applied as a ratio ((t-1)/t) ** power, so it cannot overflow); returns the power."""
    if isinstance(value, Linear):
        if min(value.start, value.end) < 0:
            raise ValueError(f"{field}: a schedule's powers must be >= 0, got {value!r}")
        return value
    if isinstance(value, str):
        return AVERAGING[check_choice(field, value, AVERAGING)]
    try:
        return check_float(field, value, 0.0, MAX_POWER)
    except ValueError:
        raise ValueError(f"{field} must be one of {_listing(AVERAGING)} or a finite power in [0, {MAX_POWER:g}], "
                         f"got {value!r}") from None


def check_asymmetry(field: str, value: Any) -> float | str | None:
    """The asymmetry of a predictive store (Meng et al. 2026): None (the prediction at full step, PCFR+), a
    fixed alpha in [0, ASYMMETRY_MAX] (the prediction's step is 1 / (1 + alpha): SAPCFR+ takes 2), or
    "adaptive" (alpha learned per information set, APCFR+)."""
    if value is None or (isinstance(value, str) and value == "adaptive"):
        return value
    return _number_or(field, value, 0.0, ASYMMETRY_MAX, "None or 'adaptive'")


def check_discount(field: str, value: Any, low: float = 0.0, why: str = "") -> float | None:
    """A Discounted-CFR power (None: no discounting) in [low, MAX_POWER]; `why` explains the low end."""
    return None if value is None else _number_or(field, value, low, MAX_POWER, f"None (no discounting{why})")


def _number_or(field: str, value: Any, low: float, high: float, alternatives: str) -> float:
    try:
        return check_float(field, value, low, high)
    except ValueError:
        raise ValueError(f"{field} must be a finite number in [{low:g}, {high:g}] or {alternatives}, "
                         f"got {value!r}") from None



def check_weights(weights):
    """None, or the per-sequence weights as a read-only float array (finite, non-negative, positive sum)."""
    if weights is None:
        return None
    try:
        w = np.array(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"weights must be None or one finite non-negative number per sequence, "
                         f"got {type(weights).__name__}") from None
    if w.ndim != 1 or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise ValueError(f"weights must be None or one finite non-negative number per sequence with a positive "
                         f"sum, got shape {w.shape}")
    w.setflags(write=False)
    return w

