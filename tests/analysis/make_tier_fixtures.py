#!/usr/bin/env python3
"""Writes the KV-tier fixtures: copies of real `dpsim run` results cut down to the keys plot.py reads from
a run result (analysis/dpsim_plots/inputs.py, _run and _tiers), each under the source's file name.

    python3 tests/analysis/make_tier_fixtures.py RESULT.json... --out tests/analysis/fixtures/storage-capacity

Kept: the keys of make_scaling_fixtures.py, and scenario.storage.capacity_bytes, scenario.cache.dram_bytes,
summary.storage.hit_rate / recomputed_tokens / evicted_bytes / stored_bytes_peak,
summary.storage_read_bytes and summary.dram_tier (whole: null without a tier). "resources" becomes {}.
Values are copied unchanged.
"""

import copy

import make_scaling_fixtures

KEEP = copy.deepcopy(make_scaling_fixtures.KEEP)
KEEP["scenario"].update({"storage": {"capacity_bytes": True}, "cache": {"dram_bytes": True}})
KEEP["summary"].update({
    "storage": {"hit_rate": True, "recomputed_tokens": True, "evicted_bytes": True, "stored_bytes_peak": True},
    "storage_read_bytes": True,
    "dram_tier": True,
})


if __name__ == "__main__":
    make_scaling_fixtures.main(KEEP, __doc__.splitlines()[0])
