#!/usr/bin/env python3
"""Tests of analysis/plot.py on the fixtures in tests/analysis/fixtures/ (plain Python 3, no pytest).

    python3 tests/analysis/test_plot.py [--keep DIR] [CASE...]

Runs plot.py as a user would (a subprocess) and checks the PNGs it writes (PNG signature, more than
1 KB, a real image size) and the lines it prints; bad inputs must exit 2 with a message naming the
file. Prints one line per case and "N passed, M failed"; exits 1 when a case fails. --keep DIR keeps
the figures (one folder per case) for a look.

Fixtures: ds27b-32k-*.json are real `dpsim run` results (see tests/analysis/README.md);
sweep-summary.json (made by make_sweep_fixture.py) and capacity.json are hand-made in the shape dpsim
will write.
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
    cases = [
        (write_json(os.path.join(tmp, "bad-jct.json"), run), "summary.jct_s: expected a number"),
        (write_json(os.path.join(tmp, "bad-sweep.json"), sweep), "points[3].utilization.snic"),
        (write_json(os.path.join(tmp, "bad-capacity.json"), cap), "points[1].aps"),
        (write_json(os.path.join(tmp, "bad-kind.json"), odd_kind), 'kind: expected "sweep" or "capacity"'),
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
