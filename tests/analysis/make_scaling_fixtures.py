#!/usr/bin/env python3
"""Writes the scaling fixtures: copies of real `dpsim run` results cut down to the keys plot.py reads
from a run result (analysis/dpsim_plots/inputs.py, _run), each under the source's file name.

    python3 tests/analysis/make_scaling_fixtures.py RESULT.json... --out tests/analysis/fixtures/scaling

Kept: complete; summary.jct_s, ttft_s, tpot_s, ttft_breakdown_s; scenario.name, model,
cluster.prefill_nodes / decode_nodes, workload.agents / mode / append_scale / gen_scale,
policy.read_path / scheduler / layerwise, outputs.timeseries_interval_s. "resources" becomes {} (the
results have no utilisation series, and a run result must have the key). Values are copied unchanged.
"""

import argparse
import json
import os

KEEP = {
    "complete": True,
    "summary": {"jct_s": True, "ttft_s": True, "tpot_s": True, "ttft_breakdown_s": True},
    "scenario": {
        "name": True, "model": True,
        "cluster": {"prefill_nodes": True, "decode_nodes": True},
        "workload": {"agents": True, "mode": True, "append_scale": True, "gen_scale": True},
        "policy": {"read_path": True, "scheduler": True, "layerwise": True},
        "outputs": {"timeseries_interval_s": True},
    },
}


def cut(doc, keep):
    """doc with only the keys of keep (nested; True keeps a value whole). A key keep names must exist."""
    return {k: doc[k] if sub is True else cut(doc[k], sub) for k, sub in keep.items()}


def main(keep=None, description=None):
    """Cuts each RESULT.json given on the command line down to `keep` (default KEEP) into --out."""
    keep = KEEP if keep is None else keep
    parser = argparse.ArgumentParser(description=description or __doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", metavar="RESULT.json")
    parser.add_argument("--out", required=True, metavar="DIR")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for path in args.results:
        with open(path) as f:
            doc = cut(json.load(f), keep)
        doc["resources"] = {}
        with open(os.path.join(args.out, os.path.basename(path)), "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
