#!/usr/bin/env python3
"""Writes tests/analysis/fixtures/sweep-summary.json (on stdout): a hand-made sweep summary in the shape
`dpsim sweep` will write, NOT a simulation output.

The values follow the paper's §4.2 load model on its hardware (g = 8 GPUs per node, s = 1, M/(sB) = 10),
with every SNIC at line rate: per-GPU PE CNIC write (1 + D/P)/g, DE CNIC write (2P/D + 1)/g, DE CNIC
read (P/D + 2)/g, DE DRAM (2P/D + 3)/10. A resource past 1 throttles the whole point; measured
utilisations are taken as 96 % of the model's loads (98.5 % for the SNIC), and the `dualpath` combination
as 6 % less efficient than the ideal `split`. JCTs assume agents scale with P + D (2e13 bytes per node).
Numbers are illustrative; the fixture only has to exercise the plot.

    python3 tests/analysis/make_sweep_fixture.py > tests/analysis/fixtures/sweep-summary.json
"""

import json

GRID = [(1, 9), (1, 7), (1, 5), (1, 3), (1, 2), (1, 1), (2, 1), (3, 1), (7, 2), (4, 1), (5, 1)]
G = 8.0  # GPUs per node
WORK_PER_NODE_BYTES = 2.0e13
SNIC_BPS = 50e9


def point(P, D, combo, eff):
    r = P / D
    loads = {  # fraction of capacity when every SNIC runs at line rate
        "cnic_write": max((1 + 1 / r) / G, (2 * r + 1) / G),
        "cnic_read": max(2 / G, (r + 2) / G),
        "dram": max(0.2, (2 * r + 3) / 10),
    }
    cap = max(1.0, max(loads.values()))
    snic = round(0.985 * eff / cap, 3)
    util = {"snic": snic}
    for k in ("cnic_read", "cnic_write", "dram"):
        util[k] = round(0.96 * eff * loads[k] / cap, 3)
    util["pcie"] = 0.0
    util["gpu"] = round(min(0.93, 0.11 * (1 + 1 / r) * snic), 3)
    busy = {k: v for k, v in util.items() if k != "gpu"}
    saturated = [k for k in ("cnic_read", "cnic_write", "dram") if loads[k] > 1.0001]
    free = snic >= 0.9 and not saturated
    first = None if free else max(saturated, key=lambda k: loads[k])
    if first == "cnic_write":
        first = "prefill.cnic.write" if r < 1 else "decode.cnic.write"
    elif first == "dram":
        first = "decode.dram.shared"
    name = "p%d-d%d-%s" % (P, D, combo)
    return {"name": name, "P": P, "D": D, "pd": round(r, 6), "sets": {"policy.read_path": combo},
            "result": "points/%s.json" % name, "jct_s": round(WORK_PER_NODE_BYTES / (SNIC_BPS * snic), 1),
            "utilization": util, "bottleneck": max(busy, key=busy.get), "bottleneck_free": free,
            "first_saturated": first}


def main():
    points = [point(P, D, combo, eff) for combo, eff in (("split", 1.0), ("dualpath", 0.94)) for P, D in GRID]
    free = [p["pd"] for p in points if p["bottleneck_free"] and p["sets"]["policy.read_path"] == "split"]
    doc = {"kind": "sweep", "scenario": "scenarios/sweeps/bottleneck-free.json",
           "grid": [{"P": P, "D": D} for P, D in GRID],
           "analytic_range": {"pd_min": 0.142857, "pd_max": 3.5},
           "measured_range": {"pd_min": min(free), "pd_max": max(free)},
           "points": points}
    print(json.dumps(doc, indent=1))


if __name__ == "__main__":
    main()
