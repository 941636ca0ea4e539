"""Issue 32 item 8 (`rcfr.numba_cache`): a cached function's key covers every file its compiled code comes from,
so an edit to a file it inlines takes effect in the next process, without deleting any cache."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

WALK = """from numba import njit

STEP = 1


@njit(cache=True, inline="always")
def step(x):
    return x + STEP
"""
ENTRY = """from numba import njit

from .walk import step


@njit(cache=True)
def run(x):
    return step(x)
"""


def _fresh(code: str, cwd: Path, path: Path) -> str:
    """Run `code` in a new interpreter, `path` first on its import path and numba caching in the source tree."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["PYTHONPATH"] = os.pathsep.join([str(path), str(ROOT)])
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=1800, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


def _package(base: Path) -> Path:
    package = base / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "walk.py").write_text(WALK)
    (package / "entry.py").write_text(ENTRY)
    return package


@pytest.mark.slow
@pytest.mark.parametrize("edit", [("return x + STEP", "return x + 10 * STEP"), ("STEP = 1", "STEP = 5")])
def test_an_edit_to_an_inlined_file_takes_effect_in_the_next_process(tmp_path, edit):
    watched, plain = _package(tmp_path / "watched"), _package(tmp_path / "plain")
    code = "import rcfr, rcfr.numba_cache as c; {watch}from pkg.entry import run; print(run(1))"
    runs = {}
    for name, package in (("watched", watched), ("plain", plain)):
        watch = f"c.watch({str(package)!r}); " if name == "watched" else ""
        first = _fresh(code.format(watch=watch), package.parent, package.parent)
        walk = package / "walk.py"
        walk.write_text(walk.read_text().replace(*edit))
        runs[name] = first, _fresh(code.format(watch=watch), package.parent, package.parent)
    assert runs["watched"] == ("2", "11" if "10" in edit[1] else "6")
    # negative control: numba's own key (the entry point's file) keeps running the code that was edited away
    assert runs["plain"] == ("2", "2")


def test_the_digest_follows_the_inlined_file_and_only_what_is_compiled_in(tmp_path, monkeypatch):
    import importlib

    from rcfr import numba_cache
    package = _package(tmp_path)
    (package / "other.py").write_text("X = 1\n")
    monkeypatch.setattr(numba_cache, "ROOTS", numba_cache.ROOTS + [package.resolve()])
    monkeypatch.syspath_prepend(str(tmp_path))
    entry = importlib.import_module("pkg.entry")
    try:
        assert [Path(p).name for p in numba_cache.sources(entry.run.py_func)] == ["entry.py", "walk.py"]
        before = numba_cache.digest(entry.run.py_func)
        (package / "other.py").write_text("X = 2\n")
        assert numba_cache.digest(entry.run.py_func) == before  # not compiled in
        (package / "walk.py").write_text(WALK.replace("STEP = 1", "STEP = 2"))
        assert numba_cache.digest(entry.run.py_func) != before
    finally:
        for name in ("pkg", "pkg.entry", "pkg.walk"):
            sys.modules.pop(name, None)


def test_the_driver_depends_on_every_walk_and_the_rules_source():
    from rcfr.numba_cache import sources
    from rcfr.sampling import driver
    found = {Path(p).relative_to(ROOT).as_posix() for p in sources(driver.drive.py_func)}
    assert {"rcfr/sampling/driver.py", "rcfr/sampling/tree_walks.py", "rcfr/sampling/outcome_walks.py",
            "rcfr/sampling/chance_walks.py", "rcfr/sampling/decisions.py",
            "rcfr/sampling/rules_source.py"} <= found  # the last through its @overload of the states protocol
    assert not any(p.startswith("tests/") or "site-packages" in p for p in found)


def test_the_rules_walks_depend_on_the_one_walk_and_their_visitors():
    """The visitors' hooks reach the entry points through the closure of `depth_first`'s walk."""
    from rcfr.evaluation import rules as evaluation
    from rcfr.numba_cache import sources
    from rcfr.policy import rules as policy
    from rcfr.regrets import rules as regrets
    from rcfr.sources import sizes
    for entry, visitor in ((evaluation._walk, "evaluation/rules"), (regrets._plans, "regrets/rules"),
                           (sizes._walk, "sources/sizes"), (policy._tree_codes, "policy/rules")):
        found = {Path(p).relative_to(ROOT).as_posix() for p in sources(entry.py_func)}
        assert {"rcfr/sources/walk.py", f"rcfr/{visitor}.py", "rcfr/compiler.py"} <= found, (visitor, found)
    assert "rcfr/evaluation/rules.py" in {Path(p).relative_to(ROOT).as_posix()
                                          for p in sources(regrets._plans.py_func)}  # policy_set


@pytest.mark.slow
def test_an_edit_to_a_walk_reaches_the_cached_sampling_driver(tmp_path):
    """A copy of the package with its numba cache files, a sampler run (after it the copy holds a cached
    driver), an edit of the external-sampling walk (it counts a node as 1000), a sampler run in a fresh process:
    the driver compiled again with the edited walk, not the stale cached one loaded."""
    copy = tmp_path / "src"
    shutil.copytree(ROOT / "rcfr", copy / "rcfr", ignore=shutil.ignore_patterns("*.pyc"))
    code = ("import rcfr; assert rcfr.__file__.startswith({where!r}), rcfr.__file__; "
            "s = rcfr.make_solver('es-mccfr', rcfr.load_game('kuhn'), seed=0).run(1); print(s.nodes_touched)")
    code = code.format(where=str(copy))
    before = int(_fresh(code, copy, copy))
    walk = copy / "rcfr" / "sampling" / "tree_walks.py"
    text = walk.read_text()
    assert text.count("            nodes += 1\n") == 1
    walk.write_text(text.replace("            nodes += 1\n", "            nodes += 1000\n"))
    after = int(_fresh(code, copy, copy))
    assert after == 1000 * before
