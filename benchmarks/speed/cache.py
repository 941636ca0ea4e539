"""What checking a cached game costs on open: the CRC-32 of its data against reopening unchecked.

    python -m benchmarks.speed.cache                                   # kuhn, leduc: seconds
    python -m benchmarks.speed.cache --games "leduc(ranks=13, suits=4)" --repeats 5

Each game is compiled once (cache off), saved to a temporary directory, then opened `--repeats` times
with and without the checksum, interleaved; the table gives the fastest wall seconds of each (the machine is shared: the least disturbed run), the
file's size and the checksum's throughput. The file was just written, so it is read from the page
cache (a first open after a reboot adds the disk's read time to both, mostly to the checked one).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import rcfr  # noqa: E402
from benchmarks.speed.large_games import parse  # noqa: E402  (same spelling of game specs)
from rcfr import tree  # noqa: E402


def _wall(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def measure(spec: str, repeats: int) -> dict:
    name, params = parse(spec)
    rules = rcfr.make_rules(name, **params)
    game = tree.compile_game(rules)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "game.game"
        save_s = _wall(lambda: tree.save_game(game, path))
        size = path.stat().st_size
        plain, checked = [], []
        for _ in range(repeats):
            plain.append(_wall(lambda: tree.read_game(rules, path, verify=False)))
            checked.append(_wall(lambda: tree.read_game(rules, path, verify=True)))
    plain_s, checked_s = min(plain), min(checked)
    return {"game": spec, "histories": f"{game.num_histories:,}", "file_mib": f"{size / 2**20:,.1f}",
            "save_s": f"{save_s:.3f}", "open_s": f"{plain_s:.4f}", "open_checked_s": f"{checked_s:.4f}",
            "check_gib_per_s": f"{size / 2**30 / max(checked_s - plain_s, 1e-9):.2f}"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", default=["kuhn", "leduc"])
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    rows = [measure(spec, args.repeats) for spec in args.games]
    print("| " + " | ".join(rows[0]) + " |")
    print("|" + "---|" * len(rows[0]))
    for row in rows:
        print("| " + " | ".join(row.values()) + " |")


if __name__ == "__main__":
    main()
