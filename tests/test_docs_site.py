"""The documentation site (mkdocs.yml over docs/): it builds strictly (a broken link, anchor or reference
fails), and its API reference names every public name of `rcfr`."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

import rcfr

ROOT = Path(__file__).resolve().parent.parent


def test_the_api_reference_lists_every_public_name_of_rcfr():
    page = (ROOT / "docs" / "reference" / "rcfr.md").read_text()
    listed = {line.strip()[2:] for line in page.splitlines() if line.strip().startswith("- ")}
    listed |= {line.split("::: rcfr.")[1] for line in page.splitlines() if line.startswith("::: rcfr.")}
    assert set(rcfr.__all__) - listed == set()


def test_every_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = {str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md")}
    assert {p for p in pages if p not in nav} == set()


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None,
                    reason="mkdocs is not installed (pip install 'rcfr[docs]')")
def test_the_site_builds_strictly(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr
    reference = (tmp_path / "site" / "reference" / "rcfr" / "index.html").read_text()
    assert 'id="rcfr.solvers.RegretTable"' in reference or 'id="rcfr.solvers.stores.RegretTable"' in reference
    assert (tmp_path / "site" / "getting_started" / "index.html").exists()
