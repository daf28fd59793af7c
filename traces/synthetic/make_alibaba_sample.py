#!/usr/bin/env python3
"""Writes traces/synthetic/alibaba-sample.jsonl: synthetic multi-turn sessions in the format of Alibaba's
qwen-bailian-usagetraces-anon traces (traces/README.md, "Alibaba JSONL"). Nothing in it comes from the
published traces; it exercises the format: parent_chat_id chains, 16-token block ids that later turns reuse,
regenerated answers (two requests with one parent), system prompts shared across sessions. Deterministic;
run from the repository's root: python3 traces/synthetic/make_alibaba_sample.py

It then prints the file's totals, with each request's hit counted here by a method of its own (the longest
common prefix of block ids with any earlier request of the same generated session, by brute force), for
tests/e2e/alibaba_test.cpp and traces/README.md."""
import json
import os
import random

SEED = 1
SESSIONS = 40
BLOCK = 16                            # tokens per hash_ids block
SPAN_S = 300.0                        # sessions start uniformly over this span
SYSTEM_PROMPTS = [300, 700, 1200]     # tokens; a session uses one (or none) of them
TURN_WEIGHTS = [8, 8, 7, 6, 6, 5]     # sessions of 1 .. 6 turns
REGENERATE = 0.15                     # chance that a follow-up (after turn 2) asks for the previous answer again
TYPES = ["text"] * 16 + ["search"] * 2 + ["image", "file"]


class Tokens:
    """Token ids: every new token is a new integer, so equal blocks only come from equal prefixes."""

    def __init__(self):
        self.next = 0

    def new(self, n):
        out = list(range(self.next, self.next + n))
        self.next += n
        return out


class BlockIds:
    """Sequential ids for 16-token blocks, named together with their prefix (as the traces' remapped
    hashes: ids in order of first appearance)."""

    def __init__(self):
        self.ids = {}

    def of(self, prompt):
        out, prev = [], -1
        for k in range(0, len(prompt), BLOCK):
            key = (prev, tuple(prompt[k:k + BLOCK]))
            prev = self.ids.setdefault(key, len(self.ids))
            out.append(prev)
        return out


def make_sessions(rng):
    tokens, blocks = Tokens(), BlockIds()
    system = [tokens.new(n) for n in SYSTEM_PROMPTS]
    starts = sorted(round(rng.uniform(0.5, SPAN_S), 3) for _ in range(SESSIONS))
    requests = []  # dicts with the session, the parent's position in this list, prompt and output
    for s, t0 in enumerate(starts):
        turns = rng.choices(range(1, 7), weights=TURN_WEIGHTS)[0]
        k = rng.randrange(len(SYSTEM_PROMPTS) + 1)
        prompt = (system[k] if k < len(system) else []) + tokens.new(rng.randint(20, 400))
        parent, t = None, t0
        for turn in range(turns):
            if turn > 0:
                t = round(t + rng.uniform(5.0, 60.0), 3)  # the user reads and types (or a tool runs)
                prev = requests[-1]
                if prev["parent"] is not None and rng.random() < REGENERATE:
                    prompt, parent = prev["prompt"], prev["parent"]  # the same prompt again, a sibling
                else:
                    # The previous prompt, its answer, and the new text (a user message or a tool's output).
                    new = rng.randint(20, 300) if rng.random() < 0.6 else rng.randint(300, 1500)
                    prompt, parent = prev["prompt"] + prev["output"] + tokens.new(new), len(requests) - 1
            output = tokens.new(rng.randint(30, 600))
            requests.append({"session": s, "parent": parent, "timestamp": t, "prompt": prompt, "output": output,
                             "type": rng.choice(TYPES), "hash_ids": blocks.of(prompt)})
    return requests


def main():
    rng = random.Random(SEED)
    requests = make_sessions(rng)
    order = sorted(range(len(requests)), key=lambda i: requests[i]["timestamp"])  # stable: ties keep order
    chat_id = {i: n for n, i in enumerate(order)}  # sequential in file order
    depth = {}
    lines = []
    for i in order:
        r = requests[i]
        p = r["parent"]
        depth[i] = 1 if p is None else depth[p] + 1
        lines.append(json.dumps({"chat_id": chat_id[i], "parent_chat_id": -1 if p is None else chat_id[p],
                                 "timestamp": r["timestamp"], "input_length": len(r["prompt"]),
                                 "output_length": len(r["output"]), "type": r["type"], "turn": depth[i],
                                 "hash_ids": r["hash_ids"]}))
    path = os.path.join("traces", "synthetic", "alibaba-sample.jsonl")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)

    # Hits by brute force: the longest common prefix of block ids with an earlier request of the session.
    hit = replayed_hit = input_tokens = output_tokens = 0
    seen = {}  # session -> block-id lists of its earlier requests
    for i in order:
        r = requests[i]
        ids, n = r["hash_ids"], len(r["prompt"])
        best = 0
        for other in seen.get(r["session"], []):
            m = 0
            while m < min(len(ids), len(other)) and ids[m] == other[m]:
                m += 1
            best = max(best, m)
        seen.setdefault(r["session"], []).append(ids)
        h = min(n, best * BLOCK)
        hit += h
        replayed_hit += min(h, n - 1)  # the replay computes at least one token
        input_tokens += n
        output_tokens += len(r["output"])
    multi = sum(1 for s in seen.values() if len(s) > 1)
    print(f"{path}: {len(lines)} requests, {SESSIONS} sessions ({multi} multi-turn), "
          f"span {requests[order[-1]]['timestamp'] - requests[order[0]]['timestamp']:.3f} s")
    print(f"input {input_tokens}, output {output_tokens}, hit {hit} ({100.0 * hit / input_tokens:.1f}%), "
          f"replayed hit {replayed_hit}, replayed miss {input_tokens - replayed_hit}")


if __name__ == "__main__":
    main()
