#!/usr/bin/env python3
"""Tests of analysis/plot.py on the fixtures in tests/analysis/fixtures/ (plain Python 3, no pytest).

    python3 tests/analysis/test_plot.py [--keep DIR] [CASE...]

Runs plot.py as a user would (a subprocess) and checks the PNGs it writes (PNG signature, more than
1 KB, a real image size) and the lines it prints; bad inputs must exit 2 with a message naming the
file. Prints one line per case and "N passed, M failed"; exits 1 when a case fails. --keep DIR keeps
the figures (one folder per case) for a look.

Fixtures: ds27b-32k-*.json are real `dpsim run` results, scaling/*.json real ones cut down to the keys
plot.py reads (make_scaling_fixtures.py), storage-capacity/*.json and dram-tier/*.json too
(make_tier_fixtures.py), online-*.csv / online-*.jsonl real per-turn records
(outputs.requests) with the run results that wrote them beside them, plan.json a real `dpsim plan`
output (see tests/analysis/README.md); sweep-summary.json (made by make_sweep_fixture.py)
and capacity.json are hand-made in the shape dpsim will write.
"""

import argparse
import concurrent.futures
import importlib.util
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PLOT = os.path.join(ROOT, "analysis", "plot.py")
FIX = os.path.join(HERE, "fixtures")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
TIMEOUT_S = 300


def python():
    """This interpreter when it has matplotlib, else Debian's (python3-matplotlib installs there)."""
    if importlib.util.find_spec("matplotlib") is None and os.access("/usr/bin/python3", os.X_OK):
        return "/usr/bin/python3"
    return sys.executable


def fixture(name):
    return os.path.join(FIX, name)


class Failure(Exception):
    pass


def expect(cond, message):
    if not cond:
        raise Failure(message)


def run_plot(args, out):
    proc = subprocess.run([python(), PLOT] + args + ["--out", out], capture_output=True, text=True,
                          timeout=TIMEOUT_S, cwd=ROOT)
    return proc.returncode, proc.stdout, proc.stderr


def check_png(path):
    expect(os.path.isfile(path), "%s: not written" % path)
    with open(path, "rb") as f:
        head = f.read(24)
    expect(head[:8] == PNG_SIGNATURE, "%s: not a PNG (signature %r)" % (path, head[:8]))
    size = os.path.getsize(path)
    expect(size > 1024, "%s: only %d bytes" % (path, size))
    width, height = struct.unpack(">II", head[16:24])  # IHDR
    expect(width >= 300 and height >= 200, "%s: %dx%d pixels" % (path, width, height))


def expect_pngs(out, names, args):
    """plot.py run on args writes exactly the PNGs names, printing one line per PNG."""
    rc, stdout, stderr = run_plot(args, out)
    expect(rc == 0, "exit code %d, stderr: %s" % (rc, stderr.strip()))
    printed = [line for line in stdout.splitlines() if line.strip()]
    wanted = [os.path.join(out, n) for n in names]
    expect(sorted(printed) == sorted(wanted), "printed %s, expected %s" % (printed, wanted))
    for path in wanted:
        check_png(path)
    extra = sorted(set(os.listdir(out)) - set(names))
    expect(not extra, "unexpected files written: %s" % extra)
    return stderr


def write_json(path, doc):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def load_fixture(name):
    with open(fixture(name)) as f:
        return json.load(f)


# Each case takes a fresh output folder and a scratch folder.

def case_single_result(out, tmp):
    expect_pngs(out, ["ttft-breakdown.png", "ds27b-32k-pe-128-utilization.png"],
                [fixture("ds27b-32k-pe-128.json")])


def case_several_results_jct(out, tmp):
    runs = ["ds27b-32k-%s-%d.json" % (p, a) for p in ("pe", "dualpath", "oracle") for a in (128, 256)]
    expect_pngs(out, ["jct.png", "ttft-breakdown.png"],
                [fixture(r) for r in runs] + ["--only", "jct,ttft"])


def case_sweep(out, tmp):
    # The fixture (two policies: one panel each) and a one-policy copy with the same file name, which
    # uses the summary's own measured range and needs its folder's name in the PNG's name.
    doc = load_fixture("sweep-summary.json")
    doc["points"] = [p for p in doc["points"] if p["sets"]["policy.read_path"] == "split"]
    single = write_json(os.path.join(tmp, "single", "sweep-summary.json"), doc)
    expect_pngs(out, ["fixtures-sweep-summary-sweep.png", "single-sweep-summary-sweep.png"],
                [fixture("sweep-summary.json"), single])


def case_capacity_and_online(out, tmp):
    # A capacity result, and two online run results at different arrival rates (their own latency figure).
    expect_pngs(out, ["capacity-latency.png", "capacity-ttft-breakdown.png", "latency.png",
                      "ttft-breakdown.png"],
                [fixture("capacity.json"), fixture("ds27b-32k-online-aps2.json"),
                 fixture("ds27b-32k-online-aps4.json"), "--only", "latency,ttft"])


def case_no_series(out, tmp):
    doc = load_fixture("ds27b-32k-pe-128.json")
    doc["scenario"]["outputs"]["timeseries_interval_s"] = 0
    for links in doc["resources"].values():
        for link in links:
            link.pop("series", None)
    path = write_json(os.path.join(tmp, "no-series.json"), doc)
    stderr = expect_pngs(out, [], [path, "--only", "utilization"])
    expect("no-series.json" in stderr and "timeseries_interval_s" in stderr,
           "no note about the missing series on stderr: %r" % stderr)


def _bad_inputs(tmp):
    """(file, what its message must contain) for inputs plot.py must refuse with exit code 2."""
    run = load_fixture("ds27b-32k-pe-128.json")
    run["summary"]["jct_s"] = "fast"
    sweep = load_fixture("sweep-summary.json")
    sweep["points"][3]["utilization"]["snic"] = [0.5]
    cap = load_fixture("capacity.json")
    del cap["points"][1]["aps"]
    odd_kind = {"kind": "timeline", "points": []}
    plan_not_list = load_fixture("plan.json")
    plan_not_list["points"] = {"n2-p1-d1": plan_not_list["points"][0]}
    plan_ok = load_fixture("plan.json")
    plan_ok["points"][2]["ok"] = "yes"
    plan_front = load_fixture("plan.json")
    plan_front["pareto_front"].append("n9-p5-d4")
    plan_cost = load_fixture("plan.json")
    plan_cost["objective"] = "cost"  # the fixture has no price: cost_per_hour is null
    scaled = os.path.join("scaling", "append-2-basic.json")
    append_text, gen_zero, complete_text = load_fixture(scaled), load_fixture(scaled), load_fixture(scaled)
    append_text["scenario"]["workload"]["append_scale"] = "x2"
    gen_zero["scenario"]["workload"]["gen_scale"] = 0
    complete_text["complete"] = "yes"
    capped = os.path.join("storage-capacity", "6.92e11-basic.json")
    tiered = os.path.join("dram-tier", "5e10-dualpath.json")
    capacity_text, no_storage, hit_high = load_fixture(capped), load_fixture(capped), load_fixture(capped)
    capacity_text["scenario"]["storage"]["capacity_bytes"] = "lots"
    del no_storage["summary"]["storage"]
    hit_high["summary"]["storage"]["hit_rate"] = 1.5
    tier_null, tier_no_hit, reads_text = load_fixture(tiered), load_fixture(tiered), load_fixture(tiered)
    tier_null["summary"]["dram_tier"] = None
    del tier_no_hit["summary"]["dram_tier"]["hit_rate"]
    reads_text["summary"]["storage_read_bytes"] = "many"
    cases = [
        (write_json(os.path.join(tmp, "bad-jct.json"), run), "summary.jct_s: expected a number"),
        (write_json(os.path.join(tmp, "bad-sweep.json"), sweep), "points[3].utilization.snic"),
        (write_json(os.path.join(tmp, "bad-capacity.json"), cap), "points[1].aps"),
        (write_json(os.path.join(tmp, "bad-kind.json"), odd_kind),
         'kind: expected "sweep", "capacity" or "plan"'),
        (write_json(os.path.join(tmp, "plan-points.json"), plan_not_list),
         'points: expected an array, got {"n2-p1-d1"'),
        (write_json(os.path.join(tmp, "plan-ok.json"), plan_ok),
         'points[2].ok: expected true or false, got "yes"'),
        (write_json(os.path.join(tmp, "plan-front.json"), plan_front),
         'pareto_front[1]: expected the name of one of the points, got "n9-p5-d4"'),
        (write_json(os.path.join(tmp, "plan-cost.json"), plan_cost),
         'points[0].cost_per_hour: expected a number >= 0 (the objective is "cost"), got null'),
        (write_json(os.path.join(tmp, "append-text.json"), append_text),
         'scenario.workload.append_scale: expected a number > 0, got "x2"'),
        (write_json(os.path.join(tmp, "gen-zero.json"), gen_zero),
         "scenario.workload.gen_scale: expected a number > 0, got 0"),
        (write_json(os.path.join(tmp, "complete-text.json"), complete_text),
         'complete: expected true or false, got "yes"'),
        (write_json(os.path.join(tmp, "capacity-text.json"), capacity_text),
         'scenario.storage.capacity_bytes: expected a number >= 0, got "lots"'),
        (write_json(os.path.join(tmp, "no-storage.json"), no_storage),
         "summary.storage: expected an object, got nothing (key missing)"),
        (write_json(os.path.join(tmp, "hit-high.json"), hit_high),
         "summary.storage.hit_rate: expected a number in [0, 1], got 1.5"),
        (write_json(os.path.join(tmp, "tier-null.json"), tier_null),
         "summary.dram_tier: expected an object (scenario.cache.dram_bytes is 5e+10), got null"),
        (write_json(os.path.join(tmp, "tier-no-hit.json"), tier_no_hit),
         "summary.dram_tier.hit_rate: expected a number in [0, 1], got nothing (key missing)"),
        (write_json(os.path.join(tmp, "reads-text.json"), reads_text),
         'summary.storage_read_bytes: expected a number >= 0, got "many"'),
        (write_json(os.path.join(tmp, "not-dpsim.json"), {"hello": 1}), "expected a dpsim run result"),
        (os.path.join(tmp, "missing.json"), "cannot open"),
    ]
    broken = os.path.join(tmp, "broken.json")
    with open(broken, "w") as f:
        f.write('{"summary": {')
    cases.append((broken, "not valid JSON"))
    return cases


def case_bad_inputs(out, tmp):
    for path, fragment in _bad_inputs(tmp):
        # A good file first: nothing may be written when any input is bad.
        rc, stdout, stderr = run_plot([fixture("capacity.json"), path], out)
        expect(rc == 2, "%s: exit code %d, expected 2 (stderr: %s)" % (path, rc, stderr.strip()))
        expect(path in stderr, "%s: the message does not name the file: %r" % (path, stderr))
        expect(fragment in stderr, "%s: the message lacks %r: %r" % (path, fragment, stderr))
        expect(not stdout.strip() and not os.path.exists(out), "%s: something was written" % path)


def _front(points):
    """Names of the points no other ok point beats on (x, y), both lower being better (dpsim plan's
    pareto_front, sim/study/plan_search.h), in x order."""
    pts = sorted((p for p in points if p["ok"] and p["y"] is not None), key=lambda p: (p["x"], p["y"]))
    out, best = [], float("inf")
    for p in pts:
        if p["y"] < best:
            out.append(p["name"])
            best = p["y"]
    return out


def _plan_variant(doc, goal=None, objective=None, choices=False, none_ok=False):
    """A copy of the plan fixture turned into another goal / objective / choice set-up, its
    recommendation and front redone the way dpsim plan makes them."""
    doc = json.loads(json.dumps(doc))
    points = doc["points"]
    if choices:  # --set-list policy.read_path=pe,dualpath: each point twice, the pe copy 1.5x slower
        twins = []
        for p in points:
            pe = dict(p, name=p["name"] + "-pe", sets={"policy.read_path": "pe"})
            for key in ("ttft_judged_s", "jct_s"):
                pe[key] = None if p.get(key) is None else p[key] * 1.5
            twins += [dict(p, name=p["name"] + "-dualpath", sets={"policy.read_path": "dualpath"}), pe]
        points[:] = twins
    if objective == "cost":
        doc.update(objective="cost", size_unit="money per hour")
        for p in points:
            p["cost_per_hour"] = 98.3 * p["nodes"]
    if goal is not None:
        doc.update(goal=goal, mode="offline", jct_target_s=45.0 if goal == "jct_target" else None)
        for p in points:
            p["ok"] = goal == "min_jct_x_size" or p["jct_s"] <= 45.0
    if none_ok:
        for p in points:
            p["ok"] = False
    size = "cost_per_hour" if doc["objective"] == "cost" else "gpus"
    yk = "ttft_judged_s" if doc["goal"] == "slo" else "jct_s"
    view = [{"name": p["name"], "ok": p["ok"], "x": p[size], "y": p.get(yk)} for p in points]
    doc["pareto_front"] = _front(view)
    ok = [p for p in points if p["ok"] and p.get(yk) is not None]
    if doc["goal"] == "min_jct_x_size":
        rank = lambda p: (p["jct_s"] * p[size], p[size])
    else:
        rank = lambda p: (p[size], p[yk])
    best = min(ok, key=rank) if ok else None
    doc["recommended"] = None if best is None else dict(best, objective_value=rank(best)[0])
    return doc


def case_plan(out, tmp):
    """The plan fixture and variants of it: several choices, the two offline goals, the cost
    objective, no recommendation; with a run result and --only plan (its figures left out)."""
    doc = load_fixture("plan.json")
    sys.path.insert(0, os.path.join(ROOT, "analysis"))
    from dpsim_plots import inputs  # standard library only
    plan = inputs.load(fixture("plan.json"))
    expect((plan.goal, plan.objective, plan.mode, len(plan.points)) == ("slo", "gpus", "online", 6),
           "plan.json read as %s %s %s, %d points" % (plan.goal, plan.objective, plan.mode, len(plan.points)))
    expect(plan.recommended is not None and plan.recommended.label() == "3P1D",
           "recommended: %s" % (plan.recommended and plan.recommended.label()))
    expect([(p.x, p.y) for p in plan.points] == [(p["gpus"], p.get("ttft_judged_s")) for p in doc["points"]],
           "points' (x, y) are not (gpus, ttft_judged_s)")
    # plan.json's front is the one README describes: (gpus, ttft_judged_s) over the ok points.
    view = [{"name": p.name, "ok": p.ok, "x": p.x, "y": p.y} for p in plan.points]
    expect(plan.front == _front(view) == [p["name"] for p in doc["points"] if p["on_front"]],
           "pareto_front %s, recomputed %s" % (plan.front, _front(view)))
    variants = {
        "choices": _plan_variant(doc, choices=True),
        "jct-target": _plan_variant(doc, goal="jct_target"),
        "min-jct": _plan_variant(doc, goal="min_jct_x_size", choices=True),
        "cost": _plan_variant(doc, objective="cost", choices=True),
        "none": _plan_variant(doc, none_ok=True),
    }
    expect(variants["jct-target"]["recommended"] is not None and variants["none"]["recommended"] is None,
           "variants: a recommendation expected for jct-target, none for none")
    paths = [write_json(os.path.join(tmp, name + ".json"), v) for name, v in variants.items()]
    expect_pngs(out, ["plan-pareto.png"] + [n + "-pareto.png" for n in variants],
                [fixture("plan.json")] + paths + [fixture("ds27b-32k-pe-128.json"), "--only", "plan"])


# Per-turn records (outputs.requests): the CSV fixture is policy dualpath at 1 APS, the JSONL one pe at
# 4 APS; each has its run result beside it (same name, .json).
RECORDS_CSV = "online-dualpath-aps1.csv"
RECORDS_JSONL = "online-pe-aps4.jsonl"


RECORDS_PNGS = ["latency-cdf.png", "ttft-over-time.png"]


def case_records_csv(out, tmp):
    expect_pngs(out, RECORDS_PNGS, [fixture(RECORDS_CSV)])


def case_records_jsonl_after(out, tmp):
    expect_pngs(out, RECORDS_PNGS, [fixture(RECORDS_JSONL), "--after", "2"])


def case_records_with_results(out, tmp):
    # Both records files with their run results (the SLO lines): the runs give their own figures
    # (two online rates: latency.png; ttft-breakdown.png; no series: a note each), the records the CDFs.
    inputs = [fixture(n) for n in (RECORDS_CSV, "online-dualpath-aps1.json", RECORDS_JSONL,
                                   "online-pe-aps4.json")]
    stderr = expect_pngs(out, RECORDS_PNGS + ["latency.png", "ttft-breakdown.png"], inputs)
    expect("online-dualpath-aps1.json: no utilisation time series" in stderr, "no series note: %r" % stderr)
    expect_pngs(os.path.join(tmp, "cdf"), ["latency-cdf.png"], inputs + ["--only", "cdf", "--after", "2"])


def case_records_none_kept(out, tmp):
    # --after beyond the last first token: no turn is kept, no figure, a note naming the file.
    stderr = expect_pngs(out, [], [fixture(RECORDS_CSV), "--after", "1e6"])
    expect(RECORDS_CSV in stderr and "--after" in stderr, "no note about the empty CDF: %r" % stderr)


def _edit_csv(src, dst, line, column, value):
    """dst = src with the field `column` of (1-based) line `line` set to value."""
    with open(src) as f:
        lines = f.read().splitlines()
    header = lines[0].split(",")
    fields = lines[line - 1].split(",")
    fields[header.index(column)] = value
    lines[line - 1] = ",".join(fields)
    with open(dst, "w") as f:
        f.write("\n".join(lines) + "\n")
    return dst


def _edit_jsonl(src, dst, line, edit):
    """dst = src with edit(obj) applied to the object of (1-based) line `line` (edit may return a
    replacement text for the line)."""
    with open(src) as f:
        lines = f.read().splitlines()
    obj = json.loads(lines[line - 1])
    text = edit(obj)
    lines[line - 1] = text if isinstance(text, str) else json.dumps(obj)
    with open(dst, "w") as f:
        f.write("\n".join(lines) + "\n")
    return dst


def _bad_records(tmp):
    """(file, fragments its message must contain) for records files plot.py must refuse with exit 2."""
    csv_src, jsonl_src = fixture(RECORDS_CSV), fixture(RECORDS_JSONL)
    with open(csv_src) as f:
        lines = f.read().splitlines()
    no_tpot = os.path.join(tmp, "no-tpot.csv")
    header = lines[0].split(",")
    keep = [i for i, name in enumerate(header) if name != "tpot_s"]
    with open(no_tpot, "w") as f:
        f.write("\n".join(",".join(line.split(",")[i] for i in keep) for line in lines) + "\n")
    short_row = os.path.join(tmp, "short-row.csv")
    with open(short_row, "w") as f:
        f.write("\n".join(lines[:4] + ["0,1,2"] + lines[4:]) + "\n")
    empty = os.path.join(tmp, "empty.csv")
    open(empty, "w").close()
    return [
        (no_tpot, ["line 1", "ttft_s, tpot_s, first_token_s", "missing: tpot_s"]),
        (_edit_csv(csv_src, os.path.join(tmp, "fast.csv"), 7, "ttft_s", "fast"),
         ['line 7, column ttft_s: expected a number >= 0, got "fast"']),
        (_edit_csv(csv_src, os.path.join(tmp, "no-ttft.csv"), 12, "ttft_s", ""),
         ["line 12, column ttft_s", "got nothing (empty)"]),
        (_edit_csv(csv_src, os.path.join(tmp, "negative.csv"), 3, "tpot_s", "-0.5"),
         ["line 3, column tpot_s", "a number >= 0 or empty"]),
        (short_row, ["line 5: expected 22 fields"]),
        (empty, ["empty file", "ttft_s, tpot_s, first_token_s"]),
        (_edit_jsonl(jsonl_src, os.path.join(tmp, "fast.jsonl"), 9, lambda o: o.update(ttft_s="fast")),
         ['line 9, key ttft_s: expected a number >= 0, got "fast"']),
        (_edit_jsonl(jsonl_src, os.path.join(tmp, "no-first.jsonl"), 4, lambda o: o.pop("first_token_s")),
         ["line 4, key first_token_s", "key missing"]),
        (_edit_jsonl(jsonl_src, os.path.join(tmp, "broken.jsonl"), 6, lambda o: '{"agent": 1,'),
         ["line 6: not valid JSON"]),
        (os.path.join(tmp, "missing.csv"), ["cannot open"]),
    ]


def case_bad_records(out, tmp):
    for path, fragments in _bad_records(tmp):
        # A good records file first: nothing may be written when any input is bad.
        rc, stdout, stderr = run_plot([fixture(RECORDS_JSONL), path], out)
        expect(rc == 2, "%s: exit code %d, expected 2 (stderr: %s)" % (path, rc, stderr.strip()))
        expect(path in stderr, "%s: the message does not name the file: %r" % (path, stderr))
        for fragment in fragments:
            expect(fragment in stderr, "%s: the message lacks %r: %r" % (path, fragment, stderr))
        expect(not stdout.strip() and not os.path.exists(out), "%s: something was written" % path)
    rc, _, stderr = run_plot([fixture(RECORDS_CSV), "--after", "soon"], out)
    expect(rc == 2 and "--after" in stderr, "--after soon: exit code %d, stderr %r" % (rc, stderr))


def _records_module():
    sys.path.insert(0, os.path.join(ROOT, "analysis"))
    from dpsim_plots import records  # standard library only
    return records


def _close(a, b, what):
    expect(abs(a - b) <= 1e-6 * max(abs(a), abs(b), 1e-12), "%s: %r != %r" % (what, a, b))


def case_records_cdf_data(out, tmp):
    """The CDF data of a hand-made file, computed by hand; then the fixtures against their summaries."""
    records = _records_module()
    # ttft 0.3 0.1 0.5 0.2 0.4; tpot 10 ms, none (one token), 30, 20, 40 ms; first tokens at 1..5 s.
    rows = [(1.0, 0.3, 0.010), (2.0, 0.1, None), (3.0, 0.5, 0.030), (4.0, 0.2, 0.020), (5.0, 0.4, 0.040)]
    tiny_csv = os.path.join(tmp, "tiny.csv")
    with open(tiny_csv, "w") as f:
        f.write("agent,first_token_s,ttft_s,tpot_s,read_path\n")
        for i, (first, ttft, tpot) in enumerate(rows):
            f.write("%d,%r,%r,%s,pe\n" % (i, first, ttft, "" if tpot is None else repr(tpot)))
    tiny_jsonl = os.path.join(tmp, "tiny.jsonl")
    with open(tiny_jsonl, "w") as f:
        for i, (first, ttft, tpot) in enumerate(rows):
            f.write(json.dumps({"agent": i, "first_token_s": first, "ttft_s": ttft, "tpot_s": tpot}) + "\n")
    for path in (tiny_csv, tiny_jsonl):
        rec = records.load(path)
        expect((rec.turns, rec.kept()) == (5, 5), "%s: %d turns, %d kept" % (path, rec.turns, rec.kept()))
        ttft, tpot = records.cdf(rec.ttft_s), records.cdf(rec.tpot_s)
        expect(ttft.values == [0.1, 0.2, 0.3, 0.4, 0.5], "%s: TTFT sorted %s" % (path, ttft.values))
        # Nearest rank: p50 = the ceil(0.5 * 5) = 3rd value, p99 = the ceil(4.95) = 5th.
        expect((ttft.p50, ttft.p99) == (0.3, 0.5), "%s: TTFT p50, p99 = %s, %s" % (path, ttft.p50, ttft.p99))
        expect(tpot.values == [0.01, 0.02, 0.03, 0.04], "%s: TPOT sorted %s" % (path, tpot.values))
        expect((tpot.p50, tpot.p99) == (0.02, 0.04),
               "%s: TPOT p50, p99 = %s, %s" % (path, tpot.p50, tpot.p99))
        # --after 2: first tokens at 3, 4, 5 s (strictly after) -> TTFT 0.2 0.4 0.5, TPOT 20 30 40 ms.
        rec = records.load(path, after=2.0)
        ttft, tpot = records.cdf(rec.ttft_s), records.cdf(rec.tpot_s)
        expect((rec.turns, rec.kept()) == (5, 3), "%s --after 2: %d turns, %d kept" % (path, rec.turns,
                                                                                     rec.kept()))
        expect(ttft.values == [0.2, 0.4, 0.5] and (ttft.p50, ttft.p99) == (0.4, 0.5),
               "%s --after 2: TTFT %s p50 %s p99 %s" % (path, ttft.values, ttft.p50, ttft.p99))
        expect(tpot.values == [0.02, 0.03, 0.04] and tpot.p50 == 0.03,
               "%s --after 2: TPOT %s p50 %s" % (path, tpot.values, tpot.p50))
        expect(records.load(path, after=5.0).kept() == 0, "%s --after 5: a turn kept" % path)
    xs, ys = records.cdf_points([0.1, 0.2, 0.3, 0.4, 0.5])
    expect(xs == [0.1, 0.2, 0.3, 0.4, 0.5] and ys == [0.2, 0.4, 0.6, 0.8, 1.0],
           "cdf_points: %s %s" % (xs, ys))
    xs, ys = records.cdf_points(list(range(1000)), max_points=11)
    expect(xs[0] == 0 and xs[-1] == 999 and ys[-1] == 1.0 and len(xs) == 11 and xs == sorted(xs),
           "cdf_points thinned: %s %s" % (xs, ys))
    # The fixtures agree with the summaries of the runs that wrote them: all turns give summary.ttft_s
    # and tpot_s (nearest-rank percentiles, stored as floats there); the turns after the warm-up are
    # the ones summary.slo judged (statistic "mean").
    for name in (RECORDS_CSV, RECORDS_JSONL):
        summary = load_fixture(os.path.splitext(name)[0] + ".json")["summary"]
        rec = records.load(fixture(name))
        expect(rec.turns == summary["turns_completed"], "%s: %d records, %d turns completed"
               % (name, rec.turns, summary["turns_completed"]))
        for column in ("ttft_s", "tpot_s"):
            dist = records.cdf(getattr(rec, column))
            for pct in ("p50", "p99"):
                _close(getattr(dist, pct), summary[column][pct], "%s: %s %s" % (name, column, pct))
            _close(dist.values[-1], summary[column]["max"], "%s: %s max" % (name, column))
        slo = summary["slo"]
        rec = records.load(fixture(name), after=slo["warmup_end_s"])
        expect(rec.kept() == slo["turns_judged"], "%s --after %s: %d kept, summary.slo.turns_judged %d"
               % (name, slo["warmup_end_s"], rec.kept(), slo["turns_judged"]))
        _close(sum(rec.ttft_s) / rec.kept(), slo["ttft_judged_s"], "%s: mean TTFT after the warm-up" % name)
        _close(sum(rec.tpot_s) / len(rec.tpot_s), slo["tpot_judged_s"],
               "%s: mean TPOT after the warm-up" % name)


# A hand-made records file for ttft-over-time.png: (issue_s, first_token_s, ttft_s) per turn, with
# first_token_s = issue_s + ttft_s. In 100 s bins of first-token time: [0, 100) three turns of TTFT 2, 4,
# 9 s (mean 5, p99 the 3rd of 3: 9); [100, 200) none; [200, 300) 200 turns of TTFT 1 .. 200 s, first
# tokens at 250 + (i mod 40) s (mean 100.5, p99 the 198th); [300, 400) one turn of 0.5 s at exactly 300 s.
# Binned by issue time (250 + r - i, r = i mod 40, i.e. 250 - 40 * floor(i / 40)) instead, the 200 turns
# spread over [0, 100) (i = 160 .. 200: 41, with the first three 44), [100, 200) (i = 80 .. 159: 80) and
# [200, 300) (i = 1 .. 79, with the one at 299.5 s: 80).
BIN_TURNS = ([(50 - 2, 50, 2.0), (60 - 4, 60, 4.0), (90 - 9, 90, 9.0)]
             + [(250 + i % 40 - i, 250 + i % 40, float(i)) for i in range(1, 201)] + [(299.5, 300, 0.5)])
BIN_EXPECTED = [(0.0, 3, 5.0, 9.0), (200.0, 200, 100.5, 198.0), (300.0, 1, 0.5, 0.5)]


def _write_bin_turns(path):
    with open(path, "w") as f:
        f.write("agent,issue_s,first_token_s,ttft_s,tpot_s\n")
        for i, (issue, first, ttft) in enumerate(BIN_TURNS):
            f.write("%d,%r,%r,%r,0.01\n" % (i, float(issue), float(first), ttft))
    return path


def _bins(rec_bins):
    return [(b.start_s, b.turns, b.mean_s, b.p99_s) for b in rec_bins]


def case_records_ttft_bins(out, tmp):
    """The bins of a hand-made file, worked out by hand; binning by issue time gives other bins; the
    --after cut and origin; the default bin width."""
    records = _records_module()
    rec = records.load(_write_bin_turns(os.path.join(tmp, "bins.csv")))
    expect(list(rec.first_token_s) == [float(t[1]) for t in BIN_TURNS],
           "first_token_s not kept in file order")
    got = _bins(records.ttft_bins(rec.first_token_s, rec.ttft_s, 100.0))
    expect(got == BIN_EXPECTED, "bins %s, expected %s" % (got, BIN_EXPECTED))
    by_issue = _bins(records.ttft_bins([float(t[0]) for t in BIN_TURNS], rec.ttft_s, 100.0))
    expect(by_issue != BIN_EXPECTED and [b[1] for b in by_issue] == [44, 80, 80],
           "binned by issue time: %s (the test would not tell the two apart)" % by_issue)
    # --after 60: the turns at 90 s and later, bins from 60 s: [60, 160) the one at 90 s, [160, 260) the
    # 50 turns at 250..259 s (i mod 40 < 10; their TTFTs sum to 4425), [260, 360) the other 151.
    rec = records.load(rec.path, after=60.0)
    bins = records.ttft_bins(rec.first_token_s, rec.ttft_s, 100.0, rec.origin_s())
    got = [(b.start_s, b.turns) for b in bins]
    expect(got == [(60.0, 1), (160.0, 50), (260.0, 151)], "--after 60: bins %s" % got)
    expect(bins[1].mean_s == 88.5, "--after 60: mean %s" % bins[1].mean_s)
    expect(records.load(rec.path).origin_s() == 0.0, "origin without --after")
    expect(records.first_token_span([rec]) == 300 - 90, "span %s" % records.first_token_span([rec]))
    # Nearest-rank p99 on a bin of 1000 turns is the 990th value, not the largest.
    got = _bins(records.ttft_bins([5.0] * 1000, [float(v) for v in range(1000, 0, -1)], 10.0))
    expect(got == [(0.0, 1000, 500.5, 990.0)], "1000 turns in one bin: %s" % got)
    for span, width in ((3456.0, 50.0), (250.0, 5.0), (90.0, 2.0), (150.0, 2.0), (60.0, 1.0), (1e6, 2e4),
                        (0.0, 1.0), (0.09, 0.002)):
        _close(records.readable_bin(span), width, "readable_bin(%g)" % span)


def _with_events(doc):
    doc = json.loads(json.dumps(doc))
    doc["events"] = [
        {"kind": "link_degrade", "at_s": 4, "until_s": 8, "factor": 0.25,
         "links": ["n0 snic in", "n0 snic out"], "applied_at_s": 4, "restored_at_s": 8},
        {"kind": "link_degrade", "at_s": 10, "until_s": 1e9, "factor": 0.5, "links": ["n1 cnic read gpu0"],
         "applied_at_s": 10, "restored_at_s": None},
    ]
    return doc


def case_records_ttft_time(out, tmp):
    """ttft-over-time.png alone, with --bin, with --after; then paired with a run result carrying events
    (the figure then differs from the one without), the plan handing the figure those events."""
    csv_src = fixture(RECORDS_CSV)
    expect_pngs(out, ["ttft-over-time.png"], [csv_src, "--only", "ttft-time"])
    expect_pngs(os.path.join(tmp, "bin"), ["ttft-over-time.png"],
                [csv_src, "--only", "ttft-time", "--bin", "1.5"])
    expect_pngs(os.path.join(tmp, "after"), ["ttft-over-time.png"],
                [fixture(RECORDS_JSONL), "--only", "ttft-time", "--after", "2"])
    # The same records named alike, paired with the run result without and with events: only the
    # shading (and its legend entries) can tell the two figures apart.
    figures = []
    for folder, doc in (("plain", load_fixture("online-dualpath-aps1.json")),
                        ("pair", _with_events(load_fixture("online-dualpath-aps1.json")))):
        os.makedirs(os.path.join(tmp, folder))
        shutil.copy(csv_src, os.path.join(tmp, folder, "ev.csv"))
        run = write_json(os.path.join(tmp, folder, "ev.json"), doc)
        expect_pngs(os.path.join(tmp, folder + "-out"), ["ttft-over-time.png"],
                    [os.path.join(tmp, folder, "ev.csv"), run, "--only", "ttft-time"])
        with open(os.path.join(tmp, folder + "-out", "ttft-over-time.png"), "rb") as f:
            figures.append(f.read())
    expect(figures[0] != figures[1], "the figure with events is the one without")
    inputs, _, plot = _analysis_modules()
    pair = os.path.join(tmp, "pair")
    paths = [os.path.join(pair, "ev.csv"), os.path.join(pair, "ev.json"), fixture(RECORDS_JSONL)]
    loaded = [plot.records.load(p) if plot.records.is_records(p) else inputs.load(p) for p in paths]
    plan, _ = plot._plan(loaded, plot._input_names(paths), {"ttft-time"})
    expect([(e[0], e[1], e[3]) for e in plan] == [("ttft_time", "ttft_over_time", "ttft-over-time.png")],
           "plan %s" % plan)
    curves, bin_s, given = plan[0][2]
    events = [[(e.label, e.start_s, e.end_s) for e in run.events] if run else None for _, _, run in curves]
    wanted = [[("link_degrade n0 snic in, n0 snic out x0.25", 4, 8),
               ("link_degrade n1 cnic read gpu0 x0.5", 10, None)],
              None]  # the JSONL file has no run result beside it
    expect(events == wanted, "events paired: %s" % events)
    # The default bin: both files' first tokens span 0.202 .. 13.05 s; / 60 = 0.214 -> 0.2 s.
    expect((bin_s, given) == (0.2, False), "default bin %s (given %s)" % (bin_s, given))
    plan, _ = plot._plan(loaded, plot._input_names(paths), {"ttft-time"}, 7.0)
    expect(plan[0][2][1:] == (7.0, True), "--bin 7: %s" % (plan[0][2][1:],))


def case_bad_ttft_time(out, tmp):
    """A first_token_s that is not a number >= 0, and a --bin that is not a number > 0: exit 2, the file
    with the line and the column (or the option) named, nothing written."""
    bad = [
        (_edit_csv(fixture(RECORDS_CSV), os.path.join(tmp, "soon.csv"), 9, "first_token_s", "soon"),
         ['line 9, column first_token_s: expected a number >= 0, got "soon"']),
        (_edit_csv(fixture(RECORDS_CSV), os.path.join(tmp, "negative.csv"), 4, "first_token_s", "-1"),
         ["line 4, column first_token_s: expected a number >= 0"]),
        (_edit_jsonl(fixture(RECORDS_JSONL), os.path.join(tmp, "soon.jsonl"), 3,
                     lambda o: o.update(first_token_s=[1])), ["line 3, key first_token_s", "got [1]"]),
    ]
    for path, fragments in bad:
        rc, stdout, stderr = run_plot([fixture(RECORDS_JSONL), path, "--only", "ttft-time"], out)
        expect(rc == 2, "%s: exit code %d, expected 2 (stderr: %s)" % (path, rc, stderr.strip()))
        for fragment in [path] + fragments:
            expect(fragment in stderr, "%s: the message lacks %r: %r" % (path, fragment, stderr))
        expect(not stdout.strip() and not os.path.exists(out), "%s: something was written" % path)
    for value in ("0", "-5", "soon", "inf", "nan"):
        rc, stdout, stderr = run_plot([fixture(RECORDS_CSV), "--bin=" + value], out)
        expect(rc == 2 and "--bin" in stderr and "> 0" in stderr and not os.path.exists(out),
               "--bin %s: exit code %d, stderr %r" % (value, rc, stderr))

# Append and generation scaling (scaling.png). fixtures/scaling/ holds 21 real results cut down by
# make_scaling_fixtures.py, named append-X-SYSTEM.json (gen_scale 1) and gen-X-SYSTEM.json (append_scale 1).
SCALING = os.path.join(FIX, "scaling")
SCALING_SYSTEMS = {"basic": "Basic", "dualpath": "DualPath", "oracle": "Oracle"}


def _analysis_modules():
    """dpsim_plots.inputs, dpsim_plots.scaling and plot.py's module (their data parts need no matplotlib)."""
    sys.path.insert(0, os.path.join(ROOT, "analysis"))
    import plot
    from dpsim_plots import inputs, scaling
    return inputs, scaling, plot


def _table(panel):
    """{line label: [(scale, jct_s, complete, runs)]} of a scaling.Panel, rounded for comparison."""
    return {label: [(p.scale, round(p.jct_s, 6), p.complete, p.runs) for p in points]
            for label, points in panel.lines.items()}


def case_scaling(out, tmp):
    """plot.py on the real scaling fixtures; the points drawn are the files' JCTs, by their names."""
    paths = sorted(os.path.join(SCALING, n) for n in os.listdir(SCALING))
    expect(len(paths) == 21, "fixtures/scaling: %d files, expected 21" % len(paths))
    stderr = expect_pngs(out, ["jct.png", "scaling.png", "ttft-breakdown.png"], paths)
    expect("jct.png leaves out the 18 run results" in stderr, "no note on jct.png's runs: %r" % stderr)
    expect_pngs(os.path.join(tmp, "only"), ["scaling.png"], paths + ["--only", "scaling"])
    inputs, scaling, _ = _analysis_modules()
    groups = scaling.groups([inputs.load(p) for p in paths])
    expect(len(groups) == 1 and [p.axis for p in groups[0].panels] == ["append", "gen"],
           "groups: %s" % [(g.title, [p.axis for p in g.panels]) for g in groups])
    panels = {p.axis: p for p in groups[0].panels}
    # What each file says, by its name: (panel, scale, system) -> JCT; the x1 files are in both panels.
    expected = {}
    for path in paths:
        kind, scale, name = os.path.splitext(os.path.basename(path))[0].split("-")
        with open(path) as f:
            jct = json.load(f)["summary"]["jct_s"]
        for axis in (("append", "gen") if float(scale) == 1 else (kind,)):
            expected[(axis, float(scale), SCALING_SYSTEMS[name])] = jct
    drawn = {(axis, p.scale, label): p.jct_s for axis, panel in panels.items()
             for label, points in panel.lines.items() for p in points}
    expect(drawn == expected, "points drawn %s, expected from the files %s" % (sorted(drawn.items()),
                                                                              sorted(expected.items())))
    expect(all(p.complete for panel in panels.values() for pts in panel.lines.values() for p in pts),
           "a complete run drawn as stopped early")
    for axis, panel in panels.items():
        want = [(s, expected[(axis, s, "Basic")] / expected[(axis, s, "DualPath")])
                for s in (1.0, 1.5, 2.0, 3.0)]
        got = [(s.scale, s.ratio) for s in panel.speedups]
        expect([s for s, _ in got] == [s for s, _ in want] and all(s.bound == "" for s in panel.speedups),
               "%s: speedups at %s" % (axis, got))
        for (scale, ratio), (_, ratio_want) in zip(got, want):
            _close(ratio, ratio_want, "%s x%g: DualPath's speedup over Basic" % (axis, scale))


def _scaling_run(read_path, layerwise, append, gen, jct, complete=True, agents=64):
    """A run result as plot.py reads it, made by hand (the keys of make_scaling_fixtures.py)."""
    return {"complete": complete, "resources": {},
            "scenario": {"name": "tiny", "model": "ds27b",
                         "cluster": {"prefill_nodes": 1, "decode_nodes": 1},
                         "workload": {"agents": agents, "mode": "offline", "append_scale": append,
                                      "gen_scale": gen},
                         "policy": {"read_path": read_path, "layerwise": layerwise, "scheduler": "round_robin"},
                         "outputs": {"timeseries_interval_s": 0}},
            "summary": {"jct_s": jct, "ttft_s": {"mean": 1.0}, "tpot_s": {"mean": 0.01},
                        "ttft_breakdown_s": {"queue": 0.5, "prefill": 0.5}}}


# Hand-made runs: file name -> (read_path, layerwise, append_scale, gen_scale, JCT s[, complete[, agents]]).
# Traps: "pe" with layerwise (not Basic), two DualPath seeds at append x1.5, a Basic at append x2 and
# gen x2 (in neither panel), runs stopped early at gen x3, and a 512-agent set-up (no scaling: not drawn).
SCALING_RUNS = {
    "basic-x1": ("pe", False, 1, 1, 100), "dual-x1": ("dualpath", True, 1, 1, 50),
    "oracle-x1": ("oracle", True, 1, 1, 40), "pelw-x1": ("pe", True, 1, 1, 70),
    "basic-a1.5": ("pe", False, 1.5, 1, 130), "dual-a1.5-seed1": ("dualpath", True, 1.5, 1, 60),
    "dual-a1.5-seed2": ("dualpath", True, 1.5, 1, 70),
    "basic-a2": ("pe", False, 2, 1, 200), "dual-a2": ("dualpath", True, 2, 1, 80),
    "oracle-a2": ("oracle", True, 2, 1, 60), "pelw-a2": ("pe", True, 2, 1, 150),
    "basic-g2": ("pe", False, 1, 2, 300), "dual-g2": ("dualpath", True, 1, 2, 100),
    "oracle-g2": ("oracle", True, 1, 2, 90),
    "basic-g3": ("pe", False, 1, 3, 400, False), "dual-g3": ("dualpath", True, 1, 3, 150),
    "oracle-g3": ("oracle", True, 1, 3, 95, False),
    "basic-a2-g2": ("pe", False, 2, 2, 999),
    "basic-512": ("pe", False, 1, 1, 10, True, 512), "dual-512": ("dualpath", True, 1, 1, 5, True, 512),
}


def case_scaling_series(out, tmp):
    """The series of hand-made runs: which run goes in which panel and line, the JCTs, the speedups."""
    paths = [write_json(os.path.join(tmp, name + ".json"), _scaling_run(*args))
             for name, args in SCALING_RUNS.items()]
    inputs, scaling, plot = _analysis_modules()
    runs = [inputs.load(p) for p in paths]
    groups = scaling.groups(runs)
    titles = [g.title for g in groups]
    expect(titles == ["tiny (ds27b, 1P1D), 64 agents"], "groups %s" % titles)
    group = groups[0]
    expect([os.path.basename(r.path) for r in group.left_out] == ["basic-a2-g2.json"],
           "left out: %s" % [r.path for r in group.left_out])
    panels = {p.axis: p for p in group.panels}
    expect(sorted(panels) == ["append", "gen"], "panels %s" % sorted(panels))
    expect(_table(panels["append"]) == {
        "Basic": [(1, 100, True, 1), (1.5, 130, True, 1), (2, 200, True, 1)],
        "DualPath": [(1, 50, True, 1), (1.5, 65, True, 2), (2, 80, True, 1)],
        "Oracle": [(1, 40, True, 1), (2, 60, True, 1)],
        "pe, layerwise": [(1, 70, True, 1), (2, 150, True, 1)],
    }, "append panel: %s" % _table(panels["append"]))
    expect(_table(panels["gen"]) == {
        "Basic": [(1, 100, True, 1), (2, 300, True, 1), (3, 400, False, 1)],
        "DualPath": [(1, 50, True, 1), (2, 100, True, 1), (3, 150, True, 1)],
        "Oracle": [(1, 40, True, 1), (2, 90, True, 1), (3, 95, False, 1)],
        "pe, layerwise": [(1, 70, True, 1)],
    }, "gen panel: %s" % _table(panels["gen"]))
    expect(list(panels["append"].lines) == ["Basic", "DualPath", "Oracle", "pe, layerwise"],
           "line order %s" % list(panels["append"].lines))
    seeds = panels["append"].lines["DualPath"][1]
    expect((seeds.low_s, seeds.high_s) == (60, 70), "DualPath x1.5 min-max %s-%s" % (seeds.low_s, seeds.high_s))
    speedups = {axis: [(s.scale, round(s.ratio, 6), s.bound) for s in p.speedups] for axis, p in panels.items()}
    # gen x3: Basic stopped early, so its JCT and the speedup 400 / 150 are lower bounds.
    expect(speedups == {"append": [(1, 2.0, ""), (1.5, 2.0, ""), (2, 2.5, "")],
                        "gen": [(1, 2.0, ""), (2, 3.0, ""), (3, round(400 / 150, 6), ">=")]},
           "speedups %s" % speedups)
    bound = panels["gen"].speedups[-1].text()
    expect(bound == "\u22652.67\u00d7", "gen x3's speedup written %r" % bound)
    # plot.py: jct.png keeps the runs scaling.png does not draw at a scale other than 1.
    planned, _ = plot._plan(runs, [os.path.basename(p) for p in paths], {"jct", "scaling"})
    bars = {os.path.basename(r.path) for r in next(d for _, f, d, _ in planned if f == "jct_bars")}
    expect(bars == {"basic-x1.json", "dual-x1.json", "oracle-x1.json", "pelw-x1.json", "basic-a2-g2.json",
                    "basic-512.json", "dual-512.json"}, "jct.png's runs: %s" % sorted(bars))
    stderr = expect_pngs(out, ["jct.png", "scaling.png"], paths + ["--only", "jct,scaling"])
    expect("basic-a2-g2.json: append_scale 2 and gen_scale 2 are both other than 1" in stderr
           and "leaves out the 13 run results" in stderr, "notes: %r" % stderr)


# The KV-tier figures (storage-capacity.png, dram-tier.png). fixtures/storage-capacity/ holds 21 real
# results (Basic, DualPath and Oracle at 7 capacities), fixtures/dram-tier/ 12 (Basic and DualPath at 6
# tier sizes), cut down by make_tier_fixtures.py and named SIZE-SYSTEM.json (SIZE: storage.capacity_bytes,
# resp. cache.dram_bytes per node; 0 = unlimited / no tier).
TIER_SYSTEMS = {"basic": "Basic", "dualpath": "DualPath", "oracle": "Oracle"}


def _tier_modules():
    """dpsim_plots.inputs, dpsim_plots.tiers and plot.py's module (their data parts need no matplotlib)."""
    sys.path.insert(0, os.path.join(ROOT, "analysis"))
    import plot
    from dpsim_plots import inputs, tiers
    return inputs, tiers, plot


def _drawn(group):
    """{(panel key, system, stat, size): value} of a tiers.Group: every point it draws."""
    return {(panel.spec.key, label, stat, p.size): p.value for panel in group.panels
            for (label, stat), points in panel.lines.items() for p in points}


def _from_files(folder, metrics):
    """{(panel key, system, stat, size): value} worked out from the fixtures' JSON, by their names;
    metrics: (panel key, stat, function of the parsed JSON)."""
    expected = {}
    for name in sorted(os.listdir(folder)):
        size, system = os.path.splitext(name)[0].split("-")
        with open(os.path.join(folder, name)) as f:
            doc = json.load(f)
        for key, stat, value in metrics:
            expected[(key, TIER_SYSTEMS[system], stat, float(size))] = value(doc)
    return expected


_TTFT_METRICS = (("ttft", "mean", lambda d: d["summary"]["ttft_s"]["mean"]),
                 ("ttft", "p99", lambda d: d["summary"]["ttft_s"]["p99"]),
                 ("jct", "", lambda d: d["summary"]["jct_s"]))


def _check_points(drawn, expected, what):
    expect(sorted(drawn) == sorted(expected), "%s: points drawn at %s, expected %s"
           % (what, sorted(drawn), sorted(expected)))
    for key, value in expected.items():
        _close(drawn[key], value, "%s: %s" % (what, key))


def _real_tier_figure(out, tmp, folder, figure, knob_name, sizes, systems):
    """plot.py on a folder of tier fixtures (each of the systems at each of the sizes); returns the one
    group."""
    paths = sorted(os.path.join(folder, n) for n in os.listdir(folder))
    expect(len(paths) == len(sizes) * len(systems), "%s: %d files, expected %d"
           % (folder, len(paths), len(sizes) * len(systems)))
    stderr = expect_pngs(out, ["jct.png", figure, "ttft-breakdown.png"], paths)
    left_out = (len(sizes) - 1) * len(systems)
    expect("jct.png leaves out the %d run results that %s draws" % (left_out, figure) in stderr,
           "no note on jct.png's runs: %r" % stderr)
    expect_pngs(os.path.join(tmp, "only"), [figure], paths + ["--only", os.path.splitext(figure)[0]])
    inputs, tiers, plot = _tier_modules()
    runs = [inputs.load(p) for p in paths]
    knob = getattr(tiers, knob_name)
    groups = tiers.groups(runs, knob)
    expect([g.title for g in groups] == ["ds660b-64k (ds660b, 2P4D), 1024 agents"],
           "groups: %s" % [g.title for g in groups])
    expect(groups[0].sizes == sizes, "sizes in x order %s, expected %s" % (groups[0].sizes, sizes))
    expect(all(p.complete and p.runs == 1 for panel in groups[0].panels for pts in panel.lines.values()
               for p in pts), "a point drawn hollow or from several runs")
    other = [k for k in tiers.KNOBS if k is not knob][0]
    expect(tiers.groups(runs, other) == [], "a %s group among these runs" % other.figure)
    planned, _ = plot._plan(runs, [os.path.basename(p) for p in paths], {"jct"})
    bars = sorted(os.path.basename(r.path) for r in next(d for _, f, d, _ in planned if f == "jct_bars"))
    expect(bars == ["0-%s.json" % s for s in systems], "jct.png's runs: %s" % bars)
    return groups[0]


def case_storage_capacity(out, tmp):
    """The real capacity curve: each point drawn is what its file says (miss ratio = 1 - hit rate)."""
    folder = os.path.join(FIX, "storage-capacity")
    group = _real_tier_figure(out, tmp, folder, "storage-capacity.png", "STORAGE",
                              [1.38e11, 2.77e11, 6.92e11, 1.384e12, 2.076e12, 2.768e12, 0.0],
                              ["basic", "dualpath", "oracle"])
    expected = _from_files(folder, _TTFT_METRICS + (
        ("miss", "", lambda d: 1 - d["summary"]["storage"]["hit_rate"]),
        ("evicted", "", lambda d: d["summary"]["storage"]["evicted_bytes"] / 1e12)))
    _check_points(_drawn(group), expected, "storage-capacity")
    peaks = {load_fixture(os.path.join("storage-capacity", "0-%s.json" % s))["summary"]["storage"]
             ["stored_bytes_peak"] for s in TIER_SYSTEMS}
    expect(group.working_set_bytes == max(peaks), "working set %s, the unlimited runs' peaks %s"
           % (group.working_set_bytes, peaks))


def case_dram_tier(out, tmp):
    """The real DRAM-tier runs: each point drawn is what its file says (tier hit rate 0 without a tier)."""
    folder = os.path.join(FIX, "dram-tier")
    group = _real_tier_figure(out, tmp, folder, "dram-tier.png", "DRAM",
                              [0.0, 5e10, 1e11, 2.5e11, 5e11, 1e12], ["basic", "dualpath"])
    expected = _from_files(folder, _TTFT_METRICS + (
        ("read", "", lambda d: d["summary"]["storage_read_bytes"] / 1e12),
        ("tier_hit", "", lambda d: (d["summary"]["dram_tier"] or {"hit_rate": 0.0})["hit_rate"])))
    _check_points(_drawn(group), expected, "dram-tier")
    expect(group.working_set_bytes is None, "a working set in the DRAM figure")


def _tier_run(read_path, layerwise, capacity, dram, jct, hit=1.0, tier_hit=None, complete=True, agents=64,
              old=False):
    """A run result as plot.py reads it, made by hand (the keys of make_tier_fixtures.py). The TTFT mean is
    JCT / 10 and its p99 JCT / 2; storage evicts (1 - hit) x 4 TB, holds at its peak the capacity (2 TB +
    JCT GB when unlimited), and the SNICs read 1 TB + (1 - tier_hit) x 10 TB. old: a result from before
    the tiers (no scenario.storage, scenario.cache, summary.storage, storage_read_bytes)."""
    doc = _scaling_run(read_path, layerwise, 1, 1, jct, complete=complete, agents=agents)
    doc["summary"]["ttft_s"] = {"mean": jct / 10, "p99": jct / 2}
    if old:
        return doc
    doc["scenario"]["storage"] = {"capacity_bytes": capacity, "eviction": "lru"}
    doc["scenario"]["cache"] = {"dram_bytes": dram, "eviction": "lru"}
    doc["summary"]["storage"] = {"hit_rate": hit, "recomputed_tokens": (1 - hit) * 1e6,
                                 "evicted_bytes": (1 - hit) * 4e12,
                                 "stored_bytes_peak": capacity or 2e12 + jct * 1e9}
    doc["summary"]["storage_read_bytes"] = 1e12 + (1 - (tier_hit or 0.0)) * 1e13
    doc["summary"]["dram_tier"] = None if not dram else {"hit_rate": tier_hit, "snic_bytes_saved": 1e12}
    return doc


# Hand-made runs: file name -> _tier_run arguments. Traps: "pe" with layerwise (not Basic); two DualPath
# seeds at 0.5 TB; a Basic stopped early at 0.5 TB; an Oracle from before the tiers (unlimited and no tier:
# a JCT and TTFT but no miss ratio or storage reads; tier hit rate 0); the unlimited, tier-less Basic and
# DualPath in both figures; a run with both tiers set and no partner (in neither figure); a 128-agent
# set-up of its own (a second capacity row); a 512-agent one at one capacity (no figure).
TIER_RUNS = {
    "basic-unl": ("pe", False, 0, 0, 100), "dual-unl": ("dualpath", True, 0, 0, 50),
    "oracle-old": ("oracle", True, 0, 0, 30, 1.0, None, True, 64, True),
    "basic-c1e12": ("pe", False, 1e12, 0, 120, 0.9), "dual-c1e12": ("dualpath", True, 1e12, 0, 60, 0.8),
    "basic-c5e11": ("pe", False, 5e11, 0, 300, 0.5, None, False),
    "dual-c5e11-seed1": ("dualpath", True, 5e11, 0, 200, 0.6),
    "dual-c5e11-seed2": ("dualpath", True, 5e11, 0, 240, 0.4),
    "pelw-c5e11": ("pe", True, 5e11, 0, 250, 0.5),
    "basic-d1e11": ("pe", False, 0, 1e11, 90, 1.0, 0.3),
    "dual-d1e11": ("dualpath", True, 0, 1e11, 48, 1.0, 0.2),
    "basic-d1e12": ("pe", False, 0, 1e12, 70, 1.0, 0.9),
    "dual-d1e12": ("dualpath", True, 0, 1e12, 45, 1.0, 0.95),
    "basic-c7e11-d3e11": ("pe", False, 7e11, 3e11, 999, 0.7, 0.5),
    "basic-128-unl": ("pe", False, 0, 0, 400, 1.0, None, True, 128),
    "basic-128-c1e12": ("pe", False, 1e12, 0, 500, 0.7, None, True, 128),
    "basic-512-c1e12": ("pe", False, 1e12, 0, 10, 0.9, None, True, 512),
}


def _tier_table(group):
    """{panel key: {(label, stat): [(size, value, complete, runs)]}} of a tiers.Group, rounded."""
    return {panel.spec.key: {line: [(p.size, round(p.value, 9), p.complete, p.runs) for p in points]
                             for line, points in panel.lines.items()} for panel in group.panels}


def _ttft_lines(jct_lines):
    """The TTFT panel the hand-made runs give: mean = JCT / 10, p99 = JCT / 2, from the JCT lines."""
    out = {}
    for (label, _), points in jct_lines.items():
        for stat, divisor in (("mean", 10), ("p99", 2)):
            out[(label, stat)] = [(s, round(v / divisor, 9), c, n) for s, v, c, n in points]
    return out


def case_tier_series(out, tmp):
    """The series of hand-made runs: which run goes in which figure, row and line, and every value."""
    paths = [write_json(os.path.join(tmp, name + ".json"), _tier_run(*args))
             for name, args in TIER_RUNS.items()]
    inputs, tiers, plot = _tier_modules()
    runs = [inputs.load(p) for p in paths]
    storage, dram = tiers.groups(runs, tiers.STORAGE), tiers.groups(runs, tiers.DRAM)
    expect([g.title for g in storage] == ["tiny (ds27b, 1P1D), 64 agents", "tiny (ds27b, 1P1D), 128 agents"],
           "storage rows %s" % [g.title for g in storage])
    expect([g.title for g in dram] == ["tiny (ds27b, 1P1D), 64 agents"],
           "DRAM rows %s" % [g.title for g in dram])
    jct = {("Basic", ""): [(5e11, 300, False, 1), (1e12, 120, True, 1), (0, 100, True, 1)],
           ("DualPath", ""): [(5e11, 220, True, 2), (1e12, 60, True, 1), (0, 50, True, 1)],
           ("Oracle", ""): [(0, 30, True, 1)],
           ("pe, layerwise", ""): [(5e11, 250, True, 1)]}
    want = {"miss": {("Basic", ""): [(5e11, 0.5, False, 1), (1e12, 0.1, True, 1), (0, 0, True, 1)],
                     ("DualPath", ""): [(5e11, 0.5, True, 2), (1e12, 0.2, True, 1), (0, 0, True, 1)],
                     ("pe, layerwise", ""): [(5e11, 0.5, True, 1)]},
            "jct": jct, "ttft": _ttft_lines(jct),
            "evicted": {("Basic", ""): [(5e11, 2, False, 1), (1e12, 0.4, True, 1), (0, 0, True, 1)],
                        ("DualPath", ""): [(5e11, 2, True, 2), (1e12, 0.8, True, 1), (0, 0, True, 1)],
                        ("pe, layerwise", ""): [(5e11, 2, True, 1)]}}
    got = _tier_table(storage[0])
    expect(got == want, "storage, 64 agents: %s\nexpected %s" % (got, want))
    seeds = storage[0].panels[1].lines[("DualPath", "")][0]
    expect((seeds.low, seeds.high) == (200, 240), "DualPath 0.5 TB min-max %s-%s" % (seeds.low, seeds.high))
    expect(storage[0].working_set_bytes == 2.1e12, "working set %s, expected the larger unlimited peak 2.1e12"
           % storage[0].working_set_bytes)
    expect(_tier_table(storage[1])["jct"] == {("Basic", ""): [(1e12, 500, True, 1), (0, 400, True, 1)]},
           "storage, 128 agents: %s" % _tier_table(storage[1])["jct"])
    jct = {("Basic", ""): [(0, 100, True, 1), (1e11, 90, True, 1), (1e12, 70, True, 1)],
           ("DualPath", ""): [(0, 50, True, 1), (1e11, 48, True, 1), (1e12, 45, True, 1)],
           ("Oracle", ""): [(0, 30, True, 1)]}
    want = {"jct": jct, "ttft": _ttft_lines(jct),
            "read": {("Basic", ""): [(0, 11, True, 1), (1e11, 8, True, 1), (1e12, 2, True, 1)],
                     ("DualPath", ""): [(0, 11, True, 1), (1e11, 9, True, 1), (1e12, 1.5, True, 1)]},
            "tier_hit": {("Basic", ""): [(0, 0, True, 1), (1e11, 0.3, True, 1), (1e12, 0.9, True, 1)],
                         ("DualPath", ""): [(0, 0, True, 1), (1e11, 0.2, True, 1), (1e12, 0.95, True, 1)],
                         ("Oracle", ""): [(0, 0, True, 1)]}}
    got = _tier_table(dram[0])
    expect(got == want, "DRAM tier: %s\nexpected %s" % (got, want))
    expect(dram[0].working_set_bytes is None, "a working set in the DRAM figure")
    # plot.py: jct.png keeps the runs neither figure draws at a size other than 0.
    planned, notes = plot._plan(runs, [os.path.basename(p) for p in paths],
                                {"jct", "storage-capacity", "dram-tier"})
    bars = {os.path.basename(r.path) for r in next(d for _, f, d, _ in planned if f == "jct_bars")}
    expect(bars == {"basic-unl.json", "dual-unl.json", "oracle-old.json", "basic-c7e11-d3e11.json",
                    "basic-128-unl.json", "basic-512-c1e12.json"}, "jct.png's runs: %s" % sorted(bars))
    expect(any("leaves out the 7 run results that storage-capacity.png" in n for n in notes)
           and any("leaves out the 4 run results that dram-tier.png" in n for n in notes),
           "notes: %s" % notes)
    expect_pngs(out, ["jct.png", "storage-capacity.png", "dram-tier.png"],
                paths + ["--only", "jct,storage-capacity,dram-tier"])


def case_tier_none(out, tmp):
    """Runs that differ in a tier's size but never within a set-up: no tier figure, a note saying why."""
    paths = [write_json(os.path.join(tmp, name + ".json"), _tier_run(*args)) for name, args in
             {"a": ("pe", False, 0, 0, 100, 1.0, None, True, 64),
              "b": ("pe", False, 1e12, 0, 120, 0.9, None, True, 128),
              "c": ("pe", False, 0, 1e11, 90, 1.0, 0.3, True, 256)}.items()]
    stderr = expect_pngs(out, [], paths + ["--only", "storage-capacity,dram-tier"])
    for knob in ("storage.capacity_bytes", "cache.dram_bytes"):
        note = "the run results differ in %s, but no set-up has runs that differ in it alone" % knob
        expect(note in stderr, "no note for %s: %r" % (knob, stderr))


def case_resource_names(out, tmp):
    """The resource classes the plots know are the ones the simulator writes (sim/platform/resource_class.h)."""
    import re
    header = open(os.path.join(ROOT, "sim", "platform", "resource_class.h")).read()
    enum = re.search(r"enum class ResourceClass \{([^}]*)\}", header).group(1)
    count = len([e for e in enum.split(",") if e.strip()])
    names = re.findall(r'case ResourceClass::k\w+:\s*return "(\w+)";', header)
    expect(len(names) == count, "resource_class.h: %d enumerators, %d names" % (count, len(names)))
    sys.path.insert(0, os.path.join(ROOT, "analysis"))
    from dpsim_plots import inputs
    expect(sorted(inputs.RESOURCE_CLASSES) == sorted(names),
           "inputs.RESOURCE_CLASSES %s != the simulator's %s" % (sorted(inputs.RESOURCE_CLASSES), sorted(names)))


def case_events(out, tmp):
    """A run with scenario events: the utilisation figure is drawn, the events that acted are read with their
    spans (one still on at the end, one never reached and left out), and a bad event is refused."""
    doc = load_fixture("ds27b-32k-pe-128.json")
    doc["events"] = [
        {"kind": "link_degrade", "at_s": 10, "until_s": 20, "factor": 0.25, "links": ["n1 snic in", "n1 snic out"],
         "applied_at_s": 10, "restored_at_s": 20},
        {"kind": "link_degrade", "at_s": 30, "until_s": 1e9, "factor": 0.5, "links": ["n0 cnic read gpu2"],
         "applied_at_s": 30, "restored_at_s": None},
        {"kind": "link_degrade", "at_s": 2e9, "until_s": 3e9, "factor": 0.5, "links": ["n0 dram shared"],
         "applied_at_s": None, "restored_at_s": None},
        {"kind": "role_change", "at_s": 40, "to": "decode", "prefill_nodes_after": 1, "decode_nodes_after": 3,
         "nodes": [{"node": 1, "from": "prefill", "requests_at_drain": 3, "drain_from_s": 40,
                    "switched_at_s": 45.5, "drain_s": 5.5},
                   {"node": 0, "from": "prefill", "requests_at_drain": 2, "drain_from_s": 40,
                    "switched_at_s": None, "drain_s": None}]},
        {"kind": "node_down", "at_s": 50, "nodes": [3, 2], "acted_at_s": 50, "requests_restarted": 7},
        {"kind": "node_up", "at_s": 70, "nodes": [2], "acted_at_s": 70},
    ]
    doc["summary"]["autoscale"] = {
        "policy": "slo", "ticks": 9, "vetoed": 0,
        "actions": [{"t_s": 60, "node": 2, "from": "decode", "to": "prefill", "ttft_s": 5.0, "tpot_s": 0.01,
                     "pe_buffer_fill": 0.3, "de_buffer_fill": 0.2, "requests_at_drain": 4, "drain_from_s": 60,
                     "switched_at_s": 61.25, "drain_s": 1.25}]}
    path = write_json(os.path.join(tmp, "events.json"), doc)
    expect_pngs(out, ["ttft-breakdown.png", "events-utilization.png"], [path])
    inputs = _analysis_modules()[0]
    got = [(e.label, e.start_s, e.end_s) for e in inputs.load(path).events]
    expect(got == [("link_degrade n1 snic in, n1 snic out x0.25", 10, 20),
                   ("link_degrade n0 cnic read gpu2 x0.5", 30, None),
                   ("role_change n1 prefill -> decode (drain)", 40, 45.5),
                   ("role_change n0 prefill -> decode (drain)", 40, None),
                   ("node_down n3", 50, None),
                   ("node_down n2", 50, 70),
                   ("autoscale n2 decode -> prefill (drain)", 60, 61.25)], "events %s" % got)
    doc["events"][0]["applied_at_s"] = "soon"
    bad = write_json(os.path.join(tmp, "bad-events.json"), doc)
    rc, _, stderr = run_plot([bad], os.path.join(tmp, "bad-out"))
    expect(rc == 2 and "events[0].applied_at_s: expected a number >= 0 or null" in stderr,
           "bad event: exit %d, stderr %s" % (rc, stderr.strip()))


CASES = {name[len("case_"):]: fn for name, fn in sorted(globals().items()) if name.startswith("case_")}


def run_case(name, base):
    out, tmp = os.path.join(base, name), os.path.join(base, name + ".tmp")
    os.makedirs(tmp)
    start = time.monotonic()
    try:
        CASES[name](out, tmp)
        return name, None, time.monotonic() - start
    except Failure as e:
        return name, str(e), time.monotonic() - start
    except Exception as e:  # a crash of the driver itself is a failure too
        return name, "%s: %s" % (type(e).__name__, e), time.monotonic() - start
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description="Tests of analysis/plot.py")
    parser.add_argument("cases", nargs="*", metavar="CASE",
                        help="cases to run (default: all): %s" % ", ".join(sorted(CASES)))
    parser.add_argument("--keep", metavar="DIR", help="write the figures under DIR and keep them")
    args = parser.parse_args()
    unknown = [c for c in args.cases if c not in CASES]
    if unknown:
        parser.error("unknown case %s; cases: %s" % (", ".join(unknown), ", ".join(sorted(CASES))))
    names = args.cases or sorted(CASES)
    base = args.keep or tempfile.mkdtemp(prefix="dpsim-plot-test-")
    if args.keep:
        shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base, exist_ok=True)
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
            results = list(pool.map(lambda n: run_case(n, base), names))
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    failed = 0
    for name, error, seconds in results:
        status = "FAIL" if error else "ok  "
        print("%s %s (%.1f s)%s" % (status, name, seconds, ": " + error if error else ""))
        failed += bool(error)
    print("%d passed, %d failed" % (len(results) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
