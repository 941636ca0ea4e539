"""Arms: named bundles of (solver, regressor, features, abstraction) with a curve label, so one
sweep axis (``+arm=...``, or ``glob`` patterns over arm names) can mix methods with different
shapes: BF/BF_BS/BF+/BF+_BS at many leaf budgets, CFR+ on each static abstraction, tabular CFRs.

Names: ``cfr``, ``cfr+``, ``lcfr``, ``dcfr``, ``cscfr``, ``os-mccfr``, ``es-mccfr``, ``vr-mccfr``;
``mccfrb-da``, ``mccfrb-eda``, ``mccfrb-none`` (Kuchar 2020's baseline updates); ``bf-64``, ``bf_bs-64``, ``bf+-64``, ``bf+_bs-64``
(best-first tree, 64 leaves; Morrill 2016's BF = RCFR, BF+ = RCFR+, _BS = bootstrapped targets);
``abs_<abstraction>`` (CFR+ on configs/abstraction/<abstraction>.yaml).
"""

from __future__ import annotations

from hydra.core.config_store import ConfigStore
from omegaconf import OmegaConf

from rcfr import configs

CONFIG_DIR = configs.CONFIG_DIR
TABULAR = {"cfr": "CFR", "cfr+": "CFR+", "lcfr": "LCFR", "dcfr": "DCFR",  # solvers without components
           "cscfr": "CS-CFR", "os-mccfr": "OS-MCCFR", "es-mccfr": "ES-MCCFR", "vr-mccfr": "VR-MCCFR"}
VARIANTS = {  # arm: (solver, options, label)
    "mccfrb-da": ("mccfrb", {"baseline": "da"}, "MCCFRb DA"),
    "mccfrb-eda": ("mccfrb", {"baseline": "eda"}, "MCCFRb EDA"),
    "mccfrb-none": ("mccfrb", {"baseline": "none"}, "MCCFRb NU"),
}
REGRESSION = {  # arm prefix: (solver, targets, label)
    "bf": ("rcfr", "stored", "BF"),
    "bf_bs": ("rcfr", "bootstrap", "BF_BS"),
    "bf+": ("rcfr+", "stored", "BF+"),
    "bf+_bs": ("rcfr+", "bootstrap", "BF+_BS"),
}
LEAF_BUDGETS = [2 ** k for k in range(1, 14)]  # 2 .. 8192 leaves
REGRESSION_FEATURES = "poker"


def abstraction_names() -> list[str]:
    return sorted(p.stem for p in (CONFIG_DIR / "abstraction").glob("*.yaml") if p.stem != "none")


def abstraction_label(option: str) -> str:
    """A short curve label for configs/abstraction/<option>.yaml: "J.QK", "HP", "E[HS] k=3 IR"."""
    node = OmegaConf.load(CONFIG_DIR / "abstraction" / f"{option}.yaml")
    params = node.get("params") or {}
    if node.name == "card":
        return str(params.partition)
    if node.name == "action":
        return f"wagers {params.wagers}"
    if node.name in ("ehs", "ehs2"):
        metric = "E[HS^2]" if node.name == "ehs2" or params.get("metric") == "ehs2" else "E[HS]"
        recall = " IR" if params.get("recall") == "imperfect" else ""
        return f"{metric} k={params.get('buckets', 3)}{recall}"
    return str(node.name)


def arms() -> dict[str, dict]:
    """Every arm's config node (package _global_)."""
    table: dict[str, dict] = {}
    for solver, label in TABULAR.items():
        table[solver] = {"defaults": [{"override /solver": solver}], "label": label}
    for name, (solver, options, label) in VARIANTS.items():
        table[name] = {"defaults": [{"override /solver": solver}], "label": label, "solver": {"options": options}}
    for prefix, (solver, targets, label) in REGRESSION.items():
        for leaves in LEAF_BUDGETS:
            table[f"{prefix}-{leaves}"] = {
                "defaults": [{"override /solver": solver}, {"override /regressor": "best_first"},
                             {"override /features": REGRESSION_FEATURES}],
                "label": label, "solver": {"options": {"targets": targets}},
                "regressor": {"params": {"max_leaves": leaves}}}
    for name in abstraction_names():
        table[f"abs_{name}"] = {"defaults": [{"override /solver": "cfr+"}, {"override /abstraction": name}],
                                "label": f"CFR+ {abstraction_label(name)}"}
    return table


def register_arms() -> None:
    store = ConfigStore.instance()
    for name, node in arms().items():
        store.store(group="arm", name=name, package="_global_", node=node)
