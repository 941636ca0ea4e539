"""The package's import surface, each case in a fresh interpreter (the lazy names must work first time)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def fresh(code: str) -> str:
    """Run `code` in a new interpreter from the repository root; return its stdout."""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.parametrize("code", [
    "import rcfr; print(rcfr.make_regressor('linear'))",
    "import rcfr; print(sorted(rcfr.REGRESSORS))",
    "from rcfr import make_regressor; print(make_regressor)",
])
def test_regressor_names_load_lazily_without_recursion(code):
    assert fresh(code).strip()  # issue 19: each raised RecursionError in a fresh interpreter


def test_import_rcfr_loads_no_compiled_modules():
    # The mechanism behind a fast `import rcfr` (timed by `python -X importtime -c "import rcfr"`, not here).
    out = fresh("import sys, rcfr; print(sorted(m for m in ('numba', 'scipy', 'sklearn', 'torch', 'rcfr.kernels',"
                " 'rcfr.games', 'rcfr.solvers') if m in sys.modules))")
    assert out.strip() == "[]"


def test_public_names_resolve_and_games_are_all_registered():
    out = fresh("import rcfr\n"
                "missing = [n for n in rcfr.__all__ if not hasattr(rcfr, n)]\n"
                "print(missing, 'nlocp_wagers' in rcfr.GAMES, rcfr.load_game('kuhn').num_infosets,"
                " rcfr.solvers.CFRPlus.__name__, 'load_game' in dir(rcfr))")
    assert out.split() == ["[]", "True", "12", "CFRPlus", "True"]


def test_an_unknown_attribute_is_an_attribute_error():
    import rcfr
    with pytest.raises(AttributeError, match="no attribute 'no_such_thing'"):
        rcfr.no_such_thing  # noqa: B018
    assert not hasattr(rcfr, "_private")
