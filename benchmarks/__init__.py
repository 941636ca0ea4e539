"""rcfr's benchmarks, run from the repository root as modules: ``python -m benchmarks.<group>.<script>``.

The groups: `speed` (speed and memory), `reproductions` (published figures and tables), `studies` (our own
questions). benchmarks/README.md says what each script answers and where its numbers are quoted."""

from pathlib import Path

#: the repository root (benchmarks read configs/ and write docs/)
ROOT = Path(__file__).resolve().parents[1]
