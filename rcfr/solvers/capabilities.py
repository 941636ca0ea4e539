"""What a solver cannot do on a game walked by its rules, declared once: the solvers refuse by this table when
they are built, and the experiment kit reads the same table before any work (`experiments/schema.py`).

A walk of the rules has no compiled arrays: no history ids, parent sequences, dense feature matrix or whole-game
refresh. A solver either needs the arrays outright (`NEEDS_ARRAYS`) or refuses some values of its options
there (`RULES_REFUSALS`: option, refused value, why, what to use instead)."""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple

ARRAYS_WHY = ("it needs the compiled game (its walks read the compiled arrays); use a solver that walks the rules "
              "(os-mccfr, es-mccfr, sampled-rcfr with features_on_demand=True)")
_FULL_WIDTH = ("its updates read the compiled tree; full-width CFR over the rules is cfr, cfr+, lcfr or dcfr (or "
               "es-mccfr, os-mccfr, cscfr)")
_TREE_SAMPLER = "its sampler needs the compiled tree's history ids; use os-mccfr, es-mccfr or cscfr"
_DENSE = "it predicts every sequence of the compiled game; use sampled-rcfr with features_on_demand=True"
#: solvers that need the compiled arrays outright, and why
NEEDS_ARRAYS: dict[str, str] = {
    **{name: ARRAYS_WHY for name in ("deep-cfr", "sd-cfr", "dream", "escher")},
    **{name: _FULL_WIDTH for name in ("pcfr+", "dcfr+", "pdcfr+", "hs-dcfr", "hs-pcfr+", "sapcfr+", "apcfr+",
                                      "apdcfr+", "ddcfr")},
    "vr-mccfr": _TREE_SAMPLER, "pcs-cfr": _TREE_SAMPLER, "rcfr": _DENSE, "rcfr+": _DENSE,
}
#: the library's way out of every refusal here (the kit says game.compiled=true)
COMPILE_IT = "or compile the game (rcfr.load_game(..., compiled=True)) if it fits"


class Refused(NamedTuple):
    """Option `field` may not be `value` on the rules: `why`, and `instead`."""

    field: str
    value: Any
    why: str
    instead: str


_SAMPLED_RCFR = (
    Refused("features_on_demand", False, "a dense feature matrix needs the compiled game", "features_on_demand=True"),
    Refused("profile", "cache", "it refreshes every set of the game", "profile 'visited', 'model' or None"),
    Refused("sampler", "probing", "probing reads a profile cache of every set", "sampler 'external' or 'outcome'"),
)
_MCCFR = (
    Refused("average_mode", "lazy", "lazy averaging needs parent sequences", "average_mode='stochastic'"),
    Refused("chance_sampling", "common", "common chance outcomes need event keys per history",
            "chance_sampling 'single' or 'all'"),
)
RULES_REFUSALS: dict[str, tuple[Refused, ...]] = {
    "sampled-rcfr": _SAMPLED_RCFR, "sampled-rcfr+": _SAMPLED_RCFR,
    "cscfr": _MCCFR, **{name: _MCCFR[:1] for name in ("os-mccfr", "es-mccfr", "mccfrb", "pure-cfr", "as-mccfr",
                                                      "probing-mccfr")},
}


def rules_refusal(name: str, options: Mapping[str, Any], defaults: Mapping[str, Any] | None = None,
                  prefix: str = "") -> str | None:
    """Why solver `name` with these options (missing ones: `defaults`) cannot walk a game by its rules, naming the
    option (as ``prefix + field``) and what to use instead; None if it can, as far as this table knows."""
    if name in NEEDS_ARRAYS:
        return NEEDS_ARRAYS[name]
    defaults = defaults or {}
    for refused in RULES_REFUSALS.get(name, ()):
        value = options.get(refused.field, defaults.get(refused.field))
        if type(value) is type(refused.value) and value == refused.value:
            return f"{prefix}{refused.field}={value!r}: {refused.why}; use {prefix}{refused.instead}"
    return None


def refuse_rules_walk(name: str, game, options) -> None:
    """A ValueError ``<name> on <game> walked by its rules: <why>`` where `rules_refusal` refuses solver `name` with
    `options` (an options object) on `game`."""
    fields = getattr(options, "__dataclass_fields__", {})
    why = rules_refusal(name, {f: getattr(options, f) for f in fields})
    if why is not None:
        raise ValueError(f"{name} on {game.name} walked by its rules: {why}, {COMPILE_IT}")
