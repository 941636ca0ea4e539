"""The components the kit knows about, read from the library's registries: for each config group,
component name -> the keyword parameters its factory accepts. Validation (`schema`) and building
(`build`) both read these tables; neither imports the other for them.
"""

from __future__ import annotations

from rcfr.features import FEATURES as FEATURE_REGISTRY
from rcfr.options import AVERAGE_SPACES  # noqa: F401  (the kit's average_space choices)
from rcfr.registry import keyword_names
from rcfr.regressors import REGRESSORS as REGRESSOR_REGISTRY

#: solver constructor keywords the kit fills from other config groups (never from solver.options)
INJECTED_OPTIONS = ("regressor", "features", "seed")
#: solver options the kit itself handles for solvers whose constructor lacks them: ``average_space``
#: ("full" | "abstract") averages a full-width solver on an abstraction in the full or the abstract space
#: (`rcfr.abstraction.average_policy`); the sampled solvers take it as their own option
KIT_OPTIONS = ("average_space",)


def _parameters(registry: dict, skip: int = 0) -> dict[str, list[str]]:
    """Component name -> the keyword parameters its factory accepts ("none": no component)."""
    return {"none": [], **{name: keyword_names(factory)[skip:] for name, factory in registry.items()}}


#: component name -> the parameters its factory accepts
REGRESSORS: dict[str, list[str]] = _parameters(REGRESSOR_REGISTRY)
FEATURES: dict[str, list[str]] = _parameters(FEATURE_REGISTRY, skip=1)  # extractors take the game first


def _abstractions() -> dict[str, list[str]]:
    from rcfr.abstraction import INFOSET_ABSTRACTIONS

    table = {"none": [], "card": ["partition"], "action": ["wagers"]}
    for name, factory in INFOSET_ABSTRACTIONS.items():  # ranks, ehs, ehs2 (identity is "none")
        if name != "identity":
            table[name] = keyword_names(factory)[1:]
    return table


#: ``card``: a rank partition such as "J.QK"; ``action``: no-limit wagers such as "HP"; the others
#: are `rcfr.abstraction.INFOSET_ABSTRACTIONS` with their keyword parameters
ABSTRACTIONS: dict[str, list[str]] = _abstractions()
