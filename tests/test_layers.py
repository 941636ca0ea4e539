"""The import graph of the library has no circles, and every import goes to its own layer or one below
(docs/architecture.md, "Import layering").

Every import counts, also one inside a function: a lazy import is still a dependency. Importing
`a.b.c` from outside package `a.b` runs `a/b/__init__.py` too, so it counts as an import of the
package as well (the root package `rcfr`, which every module passes through, is left out).
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: circles known and being removed elsewhere; each entry names its modules
KNOWN: set[frozenset[str]] = set()  # no circle is tolerated


#: folders that install under the rcfr namespace (pyproject.toml's package-dir), with their package names
MAPPED = {"rcfr": "rcfr", "features": "rcfr.features", "experiments": "rcfr.experiments"}


def _modules(folder: str) -> dict[str, Path]:
    base = ROOT / folder
    found = {}
    for path in base.rglob("*.py"):
        parts = path.relative_to(base).with_suffix("").parts
        name = ".".join((MAPPED[folder],) + (parts[:-1] if parts[-1] == "__init__" else parts))
        found[name] = path
    return found


def _is_package(name: str, modules: dict[str, Path]) -> bool:
    return modules[name].name == "__init__.py"


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The library modules `name` imports (resolved to modules of `modules`)."""
    package = name if _is_package(name, modules) else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[:len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in modules else module for a in node.names]
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if not target:
                continue
            out.add(target)
            parent = target.rpartition(".")[0]
            while parent.count(".") >= 1:  # the subpackages it passes through, not the root package
                if not (name == parent or name.startswith(parent + ".")):
                    out.add(parent)
                parent = parent.rpartition(".")[0]
    out.discard(name)
    return out


def _circles(graph: dict[str, set[str]]) -> list[frozenset]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                part.add(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(frozenset(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


@lru_cache(maxsize=1)
def _graph() -> dict[str, set[str]]:
    modules = {name: path for folder in MAPPED for name, path in _modules(folder).items()}
    return {name: {m for m in _imports(name, path, modules) if m != "rcfr"} for name, path in modules.items()}


def test_the_library_has_no_import_circles():
    circles = [c for c in _circles(_graph()) if c not in KNOWN]
    assert not circles, "import circles: " + "; ".join(" <-> ".join(sorted(c)) for c in circles)


@pytest.mark.parametrize("low, high", [("rcfr.interop.openspiel", "rcfr.policy"),  # the adapter sits below
                                       ("rcfr.interop.alignment", "rcfr.policy"),
                                       ("rcfr.solvers.mccfr", "rcfr.abstraction"),
                                       ("rcfr.solvers.stores", "rcfr.solvers.targets"),
                                       ("rcfr.games.openspiel", "rcfr.tree"),
                                       ("rcfr.budget", "rcfr.games"),
                                       ("rcfr.sources.rules", "rcfr.policy"),  # issue 32: rules_identity in the tree
                                       ("rcfr.interop.openspiel", "rcfr.solvers")])
def test_named_layer_breaks_stay_fixed(low, high):
    """The layer breaks and circles issue 19 named: a lower module that imported a higher one."""
    assert high not in _graph()[low]


#: the layers of docs/architecture.md, ground up: module-name prefixes (the longest prefix decides)
LAYERS = {
    0: ("rcfr.registry", "rcfr.files", "rcfr.errors", "rcfr.kernels", "rcfr.budget", "rcfr.distributed", "rcfr.stats",
        "rcfr.scores", "rcfr.numba_inlining", "rcfr.numba_cache", "rcfr.numba_lazy", "rcfr.options", "rcfr.regressors"),
    1: ("rcfr.games",),  # the rules, and next to each game its fast functions (and Bluff's bid tree)
    2: ("rcfr.compiler",),
    3: ("rcfr.tree", "rcfr.sources", "rcfr.features"),  # the two sources: the compiled tree and the rules walked
    4: ("rcfr.interop",),  # adapters only
    5: ("rcfr.policy",),
    6: ("rcfr.evaluation", "rcfr.regrets", "rcfr.sampling"),
    7: ("rcfr.solvers",),
    8: ("rcfr.abstraction",),
    9: ("rcfr.__main__",),  # and the root package itself, the library's face (`_layer`)
    10: ("rcfr.search",),  # a separate system on the ground layer, which the kit drives
    11: ("rcfr.experiments",),
}
#: imports that go up a layer, and why they may
UPWARD = {("rcfr.games.hand_strength", "rcfr.tree"): "a type annotation only (TYPE_CHECKING)"}


def _layer(module: str) -> int | None:
    if module == "rcfr":
        return 9
    found = [(len(prefix), layer) for layer, prefixes in LAYERS.items() for prefix in prefixes
             if module == prefix or module.startswith(prefix + ".")]
    return max(found)[1] if found else None


def test_every_module_has_a_layer():
    assert not [m for m in _graph() if _layer(m) is None]


def test_every_import_goes_to_its_own_layer_or_below():
    graph = _graph()
    upward = {(m, d) for m in graph for d in graph[m] if _layer(d) > _layer(m)}
    assert upward <= set(UPWARD), "imports of a higher layer: " + "; ".join(
        f"{m} ({_layer(m)}) -> {d} ({_layer(d)})" for m, d in sorted(upward - set(UPWARD)))
    assert set(UPWARD) <= upward, f"no longer upward, drop from UPWARD: {sorted(set(UPWARD) - upward)}"


def test_the_rules_path_has_no_package_of_its_own():
    """Each layer holds its rules-path module beside the compiled one (issue 32, item 4)."""
    assert not [m for m in _graph() if m == "rcfr.rules" or m.startswith("rcfr.rules.")]
    assert {m for m in _graph() if m.startswith("rcfr.interop.")} == {"rcfr.interop.alignment", "rcfr.interop.openspiel"}


def test_the_circle_finder_finds_a_circle():
    """Negative control: the finder is not blind."""
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset("abc")]
