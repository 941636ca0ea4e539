"""The README's Python code runs as written, and its numbers in comments are the library's."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


@pytest.mark.slow
def test_the_readme_python_blocks_run_and_print_what_their_comments_say(tmp_path, monkeypatch):
    if importlib.util.find_spec("pyspiel") is None:
        pytest.skip("the README's block ends with OpenSpiel (pip install -e '.[openspiel]')")
    monkeypatch.chdir(tmp_path)  # the block saves policies into the working directory
    (code,) = python_blocks()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), {})
    lines = out.getvalue().splitlines()
    assert lines[0] == "936 2184"  # the comment beside print(game.num_infosets, game.num_sequences)
    assert float(lines[1]) == pytest.approx(2.6e-4, rel=0.1)  # "~2.6e-4 chips"
    assert float(lines[2]) == pytest.approx(1000 * float(lines[1]))  # mbb/g of Leduc's 1-chip big blind
    size, sequences = map(int, lines[3].split())
    assert sequences == 672 and 0 < size <= 128


def test_the_readme_has_one_python_block_and_no_placeholder_left():
    assert len(python_blocks()) == 1
    assert not re.search(r"\b[A-Z_]{6,}_(PLACEHOLDER|TIME|TABLE)\b", README.read_text())
