#!/usr/bin/env python3
"""Writes traces/synthetic/day6-chat.jsonl: chat sessions whose averages are those of DeepSeek's published
24-hour serving statistics (scenarios/validation/README.md derives every number). Deterministic; run from the
repository's root: python3 scenarios/validation/make_trace.py"""
import json
import os

SESSIONS = 2000
APPEND = 1916          # miss tokens per turn: mean input 4,383 less its 56.3% hit
GEN = 1211             # output tokens per turn
THREE_TURN_SHARE = 0.478  # sessions of 3 turns (the rest have 2): mean earlier turns per turn 0.7893


def main():
    path = os.path.join("traces", "synthetic", "day6-chat.jsonl")
    lines = []
    owed = 0.0
    for k in range(SESSIONS):
        owed += THREE_TURN_SHARE  # spread the 3-turn sessions evenly
        turns = 2
        if owed >= 1:
            owed -= 1
            turns = 3
        lines.append(json.dumps({"id": f"s{k}", "turns": [{"append": APPEND, "gen": GEN}] * turns},
                                separators=(",", ":")))
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


if __name__ == "__main__":
    main()
