"""On-demand feature speed and recall-abstraction sizes on the large games (docs/large_rcfr.md).

    python -m benchmarks.speed.features_large [--speed-only] goofspiel7 [liars_dice21 latent_ttt_full pam_paper ...]

Each game (a configs/game/<name>.yaml) is compiled or loaded once, in its own process (so that one
game's memory is returned before the next). Per game it prints a Markdown row of `sequence_rows`
speeds for its own encoder: random sequences (sorted ids, one replay each), the whole action blocks
of random information sets (what a traversal asks for: one replay per set) and the same rows from
states already at hand (`encode_rows`: the encoder alone, no replay), then one row per
recall abstraction size (abstract information sets and sequences, % of the game's sequences, build
seconds) and the process's peak memory.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time

import numpy as np  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402

from benchmarks import ROOT

#: The recall abstraction of each game and the r values whose sizes are tabulated.
ABSTRACTIONS = {"goofspiel": [("goofspiel_last_turns", {"r": r, "lead": lead}) for lead in ("none", "sign", "exact")
                              for r in range(0, 7)],
                "liars_dice": [("bluff_last_bids", {"r": r}) for r in range(1, 9)],
                "latent_ttt": [("latent_ttt_last_moves", {"r": r}) for r in range(0, 9)]}
SAMPLE = 200_000


def measure(config: str, sizes: bool = True) -> dict:
    import rcfr
    from rcfr.abstraction import bluff_counters, make_abstraction
    from rcfr.features import auto_features
    from rcfr.features.encoders import encode_rows, infoset_states, make_encoder, sequence_rows

    node = OmegaConf.load(ROOT / "configs" / "game" / f"{config}.yaml")
    params = OmegaConf.to_container(node.params)
    start = time.perf_counter()
    game = rcfr.load_game(node.name, **params)
    result = {"game": game.rules.description(), "load_s": time.perf_counter() - start,
              "histories": game.num_histories, "infosets": game.num_infosets, "sequences": game.num_sequences}
    name = auto_features(game)
    encoder = make_encoder(game, name)
    rng = np.random.default_rng(0)
    sequence_rows(game, encoder, np.arange(10))  # compile or load the kernels
    picks = np.sort(rng.choice(game.num_sequences, min(SAMPLE, game.num_sequences), replace=False))
    start = time.perf_counter()
    sequence_rows(game, encoder, picks)
    result["random_rows_per_s"] = picks.size / (time.perf_counter() - start)
    sets = rng.choice(game.num_infosets, min(SAMPLE // 3, game.num_infosets), replace=False)
    blocks = np.concatenate([np.arange(game.infoset_first_seq[i], game.infoset_first_seq[i] + game.infoset_num_actions[i])
                             for i in sets])
    start = time.perf_counter()
    sequence_rows(game, encoder, blocks)
    elapsed = time.perf_counter() - start
    result.update(encoder=name, features=encoder.num_features, block_rows_per_s=blocks.size / elapsed,
                  sets_per_s=sets.size / elapsed)
    states = infoset_states(game, np.repeat(sets, game.infoset_num_actions[sets]))
    actions = blocks - np.repeat(game.infoset_first_seq[sets], game.infoset_num_actions[sets])
    encode_rows(encoder, states[:10], actions[:10])
    start = time.perf_counter()
    encode_rows(encoder, states, actions)
    result["encode_rows_per_s"] = blocks.size / (time.perf_counter() - start)
    rows = []
    if sizes and node.name in ABSTRACTIONS:
        for abstraction_name, options in ABSTRACTIONS[node.name]:
            r = options["r"]
            if node.name == "goofspiel" and r >= params["cards"]:
                continue  # r = cards - 1 already remembers every turn
            start = time.perf_counter()
            abstraction = make_abstraction(game, abstraction_name, **options)
            row = {"abstraction": abstraction.name, "infosets": abstraction.num_infosets,
                   "sequences": abstraction.num_sequences, "percent": 100 * abstraction.fraction_of(),
                   "build_s": time.perf_counter() - start}
            if node.name == "liars_dice":
                row["closed_form"] = bluff_counters(params["dice1"], params["dice2"], r, forced=False)
            rows.append(row)
    result["abstractions"] = rows
    result["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def main(configs: list[str], sizes: bool) -> None:
    print("| game | histories | sequences | encoder | features | random rows/s | block rows/s | sets/s | "
          "encode-only rows/s | peak MiB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    results = []
    for config in configs:
        out = subprocess.run([sys.executable, "-m", __spec__.name, "--one", config, str(int(sizes))], capture_output=True,
                             text=True)
        if out.returncode:
            raise SystemExit(f"{config} failed:\n{out.stderr}")
        result = json.loads(out.stdout.strip().splitlines()[-1])
        results.append(result)
        print(f"| {result['game']} | {result['histories']:,} | {result['sequences']:,} | {result['encoder']} | "
              f"{result['features']} | {result['random_rows_per_s']:,.0f} | {result['block_rows_per_s']:,.0f} | "
              f"{result['sets_per_s']:,.0f} | {result['encode_rows_per_s']:,.0f} | {result['peak_mib']:,.0f} |",
              flush=True)
    if not sizes:
        return
    print("\n| game | abstraction | abstract infosets | abstract sequences | % of sequences | build s |")
    print("|---|---|---|---|---|---|")
    for result in results:
        for row in result["abstractions"]:
            check = f" (closed form {row['closed_form']:,})" if "closed_form" in row else ""
            print(f"| {result['game']} | {row['abstraction']} | {row['infosets']:,} | "
                  f"{row['sequences']:,}{check} | {row['percent']:.3g} | {row['build_s']:.1f} |")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        print(json.dumps(measure(sys.argv[2], bool(int(sys.argv[3])))))
    else:
        speed_only = "--speed-only" in sys.argv
        main([a for a in sys.argv[1:] if a != "--speed-only"], sizes=not speed_only)
