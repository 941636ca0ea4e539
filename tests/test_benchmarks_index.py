"""benchmarks/ is a package sorted by purpose, and its README indexes every script (issue 32)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
GROUPS = ("speed", "reproductions", "studies")


def _scripts() -> set[str]:
    return {f"{p.parent.name}/{p.stem}" for group in GROUPS for p in (BENCHMARKS / group).glob("*.py")
            if p.name != "__init__.py"}


def _indexed() -> set[str]:
    found, group = set(), None
    for line in (BENCHMARKS / "README.md").read_text().splitlines():
        heading = re.match(r"## `(\w+)/`", line)
        if heading:
            group = heading.group(1)
        row = re.match(r"\| `(\w+)` \|", line)
        if row and group:
            found.add(f"{group}/{row.group(1)}")
    return found


def test_every_benchmark_is_indexed_and_every_index_row_exists():
    assert _scripts() == _indexed()


def test_no_script_edits_sys_path_to_find_the_project():
    """They run as modules (``python -m benchmarks.<group>.<script>``), so `benchmarks` and `rcfr` import."""
    offenders = [str(p.relative_to(ROOT)) for p in BENCHMARKS.rglob("*.py")
                 if "sys.path.insert(0, str(ROOT" in p.read_text() or "parents[1]))" in p.read_text()]
    assert not offenders and all((BENCHMARKS / g / "__init__.py").is_file() for g in GROUPS)
    assert not [p for p in BENCHMARKS.glob("*.py") if p.name != "__init__.py"], "scripts belong in a group"
