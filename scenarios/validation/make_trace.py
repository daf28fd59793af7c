#!/usr/bin/env python3
"""Writes the traces of scenarios/validation/ (its README derives every number). Deterministic; run from the
repository's root: python3 scenarios/validation/make_trace.py
  traces/synthetic/day6-chat.jsonl        chat sessions whose averages are those of DeepSeek's published 24-hour
                                          serving statistics;
  traces/synthetic/prefill-profile.jsonl  one-turn sessions of a 4,096-token prompt (no cache) and one output
                                          token: DeepSeek's prefill profile (4K prompts);
  traces/synthetic/decode-profile.jsonl   16,384 one-turn sessions of a 3,072-token prompt and 2,048 output
                                          tokens: 128 requests per GPU of an EP128 decode unit whose KV averages
                                          about 4K tokens, DeepSeek's decode profile;
  traces/synthetic/prefill-length-<N>k.jsonl  one-turn sessions of an N-thousand-token prompt (N = 1, 2, 8, 16,
                                          32) and one output token, 20 passes' worth of an EP32 unit at 16K tokens
                                          per GPU: prefill throughput against prompt length;
  traces/synthetic/ant-h20-b<B>.jsonl     16 x B one-turn sessions of a 4,096-token prompt and 1,536 output
                                          tokens (B = 12, 32, 48): Ant Group's DeepSeek-R1 decode on H20 at B
                                          requests per GPU of an EP16 unit."""
import json
import os

SESSIONS = 2000
APPEND = 1916          # miss tokens per turn: mean input 4,383 less its 56.3% hit
GEN = 1211             # output tokens per turn
THREE_TURN_SHARE = 0.478  # sessions of 3 turns (the rest have 2): mean earlier turns per turn 0.7893


PREFILL_SESSIONS = 2560  # 32 GPUs x 4 prompts per pass x 20 passes
PREFILL_PROMPT = 4096
DECODE_SESSIONS = 16384  # 128 GPUs x 128 requests
DECODE_PROMPT = 3072
DECODE_GEN = 2048        # the KV grows from 3,072 to 5,120 tokens: 4,096 on average


def write(path, lines):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def one_turn(prefix, n, append, gen):
    return [json.dumps({"id": f"{prefix}{k}", "turns": [{"append": append, "gen": gen}]}, separators=(",", ":"))
            for k in range(n)]


def main():
    synthetic = os.path.join("traces", "synthetic")
    write(os.path.join(synthetic, "prefill-profile.jsonl"), one_turn("p", PREFILL_SESSIONS, PREFILL_PROMPT, 1))
    write(os.path.join(synthetic, "decode-profile.jsonl"),
          one_turn("d", DECODE_SESSIONS, DECODE_PROMPT, DECODE_GEN))
    for k in (1, 2, 8, 16, 32):
        prompt = 1024 * k
        sessions = max(32 * 20, 32 * 20 * 16384 // prompt)
        write(os.path.join(synthetic, f"prefill-length-{k}k.jsonl"), one_turn("p", sessions, prompt, 1))
    for batch in (12, 32, 48):
        write(os.path.join(synthetic, f"ant-h20-b{batch}.jsonl"), one_turn("a", 16 * batch, 4096, 1536))
    path = os.path.join(synthetic, "day6-chat.jsonl")
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
    write(path, lines)


if __name__ == "__main__":
    main()
