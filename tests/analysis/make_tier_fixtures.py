#!/usr/bin/env python3
"""Writes the KV-tier fixtures: copies of real `dpsim run` results cut down to the keys plot.py reads from
a run result (analysis/dpsim_plots/inputs.py, _run and _tiers), each under the source's file name.

    python3 tests/analysis/make_tier_fixtures.py RESULT.json... --out tests/analysis/fixtures/storage-capacity

Kept: the keys of make_scaling_fixtures.py, and scenario.storage.capacity_bytes, scenario.cache.dram_bytes,
summary.storage.hit_rate / recomputed_tokens / evicted_bytes / stored_bytes_peak,
summary.storage_read_bytes and summary.dram_tier (whole: null without a tier). "resources" becomes {}.
Values are copied unchanged.
"""

import argparse
import copy
import json
import os

from make_scaling_fixtures import KEEP as SCALING_KEEP
from make_scaling_fixtures import cut

KEEP = copy.deepcopy(SCALING_KEEP)
KEEP["scenario"].update({"storage": {"capacity_bytes": True}, "cache": {"dram_bytes": True}})
KEEP["summary"].update({
    "storage": {"hit_rate": True, "recomputed_tokens": True, "evicted_bytes": True, "stored_bytes_peak": True},
    "storage_read_bytes": True,
    "dram_tier": True,
})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", metavar="RESULT.json")
    parser.add_argument("--out", required=True, metavar="DIR")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for path in args.results:
        with open(path) as f:
            doc = cut(json.load(f), KEEP)
        doc["resources"] = {}
        with open(os.path.join(args.out, os.path.basename(path)), "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
