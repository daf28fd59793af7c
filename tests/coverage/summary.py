#!/usr/bin/env python3
"""Line and function coverage per folder of sim/, from gcovr's JSON report (make coverage).

Usage: summary.py COVERAGE.json [--headers sim] [--min-lines 85] [--min-functions 90]

Prints one row per folder of sim/ (lines covered / lines, functions called / functions) and the total,
marks the folders below the thresholds, then lists the functions that no test ran and that a header under
--headers declares (by name): the exported functions no test calls. A function counts once per name and
file however many translation units instantiate it; file-local functions (anonymous namespaces) and lambdas
count towards the figures but are not listed.
"""
import argparse
import json
import os
import re
import sys
from collections import defaultdict


def folder_of(path):
    parts = path.split("/")
    return "/".join(parts[:2]) if len(parts) > 2 else parts[0]


def bare_name(function):
    """sim::config::load_engine(std::string const&) -> load_engine; operator names kept whole."""
    head = function.split("(")[0]
    head = re.sub(r"<[^<>]*>", "", head)  # template arguments (one level is enough for sim/)
    head = re.sub(r"\[abi:[^]]*\]", "", head)  # [abi:cxx11] tags
    return head.split("::")[-1].strip()


def header_names(root):
    names = set()
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith(".h"):
                with open(os.path.join(d, f), encoding="utf-8") as h:
                    names.update(re.findall(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(", h.read()))
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("report")
    ap.add_argument("--headers", default=None, help="folder whose headers declare the exported functions")
    ap.add_argument("--min-lines", type=float, default=85.0)
    ap.add_argument("--min-functions", type=float, default=90.0)
    args = ap.parse_args()

    with open(args.report, encoding="utf-8") as f:
        report = json.load(f)

    lines = defaultdict(lambda: [0, 0])
    funcs = defaultdict(lambda: [0, 0])
    uncalled = []
    for entry in report["files"]:
        path = entry["file"]
        if not path.startswith("sim/"):
            continue
        folder = folder_of(path)
        for ln in entry["lines"]:
            if ln.get("gcovr/noncode") or ln.get("gcovr/excluded"):
                continue
            lines[folder][1] += 1
            lines[folder][0] += 1 if ln["count"] > 0 else 0
        for fn in entry["functions"]:
            funcs[folder][1] += 1
            if fn["execution_count"] > 0:
                funcs[folder][0] += 1
            else:
                uncalled.append((path, fn["lineno"], fn["name"]))

    def pct(c, t):
        return 100.0 * c / t if t else 100.0

    print(f"{'folder':<14} {'lines':>16} {'%':>6}  {'functions':>11} {'%':>6}")
    below = []
    tl, tf = [0, 0], [0, 0]
    for folder in sorted(set(lines) | set(funcs)):
        lc, lt = lines[folder]
        fc, ft = funcs[folder]
        tl = [tl[0] + lc, tl[1] + lt]
        tf = [tf[0] + fc, tf[1] + ft]
        flag = ""
        if pct(lc, lt) < args.min_lines or pct(fc, ft) < args.min_functions:
            flag = "  below"
            below.append(folder)
        print(f"{folder:<14} {lc:>7}/{lt:<8} {pct(lc, lt):>5.1f}%  {fc:>5}/{ft:<5} {pct(fc, ft):>5.1f}%{flag}")
    print(f"{'total':<14} {tl[0]:>7}/{tl[1]:<8} {pct(*tl):>5.1f}%  {tf[0]:>5}/{tf[1]:<5} {pct(*tf):>5.1f}%")
    if below:
        print(f"below {args.min_lines:g}% of lines or {args.min_functions:g}% of functions: {', '.join(below)}")

    if args.headers:
        declared = header_names(args.headers)
        listed = sorted(
            (p, n, name)
            for p, n, name in uncalled
            if "anonymous namespace" not in name and "lambda" not in name and bare_name(name) in declared
        )
        print(f"\nfunctions declared in {args.headers}/'s headers that no test ran: {len(listed)}")
        for p, n, name in listed:
            print(f"  {p}:{n}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
