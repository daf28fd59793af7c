#!/usr/bin/env python3
"""Plots dpsim's JSON outputs as PNGs.

    python3 analysis/plot.py RESULT_OR_SUMMARY... --out DIR [--only FIGURES]

Each input is a run result (dpsim run), a sweep summary (kind "sweep") or a capacity result (kind
"capacity"); the kind is detected from the content. Writes into DIR (created if needed), printing one
line per PNG:
  jct.png                      JCT bars per read-path policy against agents (>= 2 offline run results)
  latency.png                  TTFT/TPOT p50, p99 against APS (online run results at >= 2 rates)
  ttft-breakdown.png           TTFT breakdown, one stacked bar per run result
  <input>-utilization.png      per run result: utilisation over time per SNIC/CNIC/DRAM/PCIe/storage/GPU
  <input>-sweep.png            per sweep summary: utilisation per resource class against P/D
  <input>-latency.png          per capacity result: latency against APS with the SLO lines
  <input>-ttft-breakdown.png   per capacity result: TTFT breakdown per APS point
<input> is the file name without .json (with its folder's name in front when two inputs share it).
--only jct,ttft,... writes only those figure families (names: jct, latency, ttft, utilization, sweep).

Exit codes: 0 = done; 2 = bad command line, an input that is not a readable dpsim output (the message
names the file, the JSON path and what was expected), or DIR cannot be written; 3 = matplotlib is
missing. Needs only Python 3 and matplotlib (Debian: python3-matplotlib).
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from dpsim_plots import inputs  # noqa: E402  (after the path set-up; standard library only)

# Debian's python3-matplotlib installs for the system interpreter; when `python3` on PATH is another
# one (pyenv, a virtualenv) without matplotlib, the script re-runs itself under this interpreter.
SYSTEM_PYTHON = "/usr/bin/python3"
_REEXEC_ENV = "DPSIM_PLOT_REEXEC"
# Figure families, as --only names them (a capacity result gives a "latency" and a "ttft" figure).
FIGURES = ("jct", "latency", "ttft", "utilization", "sweep")


def _figure_list(text):
    chosen = [f.strip() for f in text.split(",") if f.strip()]
    unknown = [f for f in chosen if f not in FIGURES]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError("unknown figure %s; expected a comma-separated subset of: %s"
                                         % (", ".join(unknown) or "list ''", ",".join(FIGURES)))
    return chosen


def _parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="plot.py", description="Plot dpsim run results, sweep summaries and capacity results as PNGs.")
    parser.add_argument("inputs", nargs="+", metavar="RESULT_OR_SUMMARY", help="JSON files written by dpsim")
    parser.add_argument("--out", required=True, metavar="DIR", help="directory for the PNGs (created)")
    parser.add_argument("--only", metavar="FIGURES", type=_figure_list, default=FIGURES,
                        help="comma-separated subset of: %s (default: all)" % ",".join(FIGURES))
    return parser.parse_args(argv)


def _import_figures():
    """Imports the figure modules, re-running under SYSTEM_PYTHON when matplotlib is missing here."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        here = os.path.realpath(sys.executable or "")
        if (os.environ.get(_REEXEC_ENV) is None and os.access(SYSTEM_PYTHON, os.X_OK)
                and os.path.realpath(SYSTEM_PYTHON) != here):
            sys.stdout.flush()
            os.environ[_REEXEC_ENV] = "1"
            os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON, os.path.abspath(__file__)] + sys.argv[1:])
        sys.stderr.write("plot.py: matplotlib is not installed for %s; install Debian's python3-matplotlib "
                         "(apt-get install python3-matplotlib) and run with %s\n"
                         % (sys.executable, SYSTEM_PYTHON))
        sys.exit(3)
    from dpsim_plots import capacity, runs, sweep

    return {"capacity": capacity, "runs": runs, "sweep": sweep}


def _names(paths):
    """A distinct file-name stem per input: the name without .json, prefixed by its folder's name
    (then numbered) when two inputs share it."""
    stems = [os.path.splitext(os.path.basename(p))[0] for p in paths]
    out = []
    for path, stem in zip(paths, stems):
        if stems.count(stem) > 1:
            folder = os.path.basename(os.path.dirname(os.path.abspath(path)))
            stem = "%s-%s" % (folder, stem) if folder else stem
        base, n = stem, 2
        while stem in out:
            stem, n = "%s-%d" % (base, n), n + 1
        out.append(stem)
    return out


def _plan(loaded, names, want):
    """The figures to draw, as (module, function, data, file name) in output order, and the notes for
    stderr. Decided before matplotlib is imported, so inputs that give no figure cost no import."""
    run_results = [x for x in loaded if isinstance(x, inputs.Run)]
    offline = [r for r in run_results if r.mode == "offline"]
    online = [r for r in run_results if r.mode == "online" and r.aps is not None]
    plan, notes = [], []
    if "jct" in want and len(offline) >= 2:
        plan.append(("runs", "jct_bars", offline, "jct.png"))
    if "latency" in want and len({r.aps for r in online}) >= 2:
        plan.append(("capacity", "latency_vs_aps_runs", online, "latency.png"))
    if "ttft" in want and run_results:
        plan.append(("runs", "ttft_breakdown", run_results, "ttft-breakdown.png"))
    for item, name in zip(loaded, names):
        if isinstance(item, inputs.Run) and "utilization" in want:
            if item.has_series():
                plan.append(("runs", "utilization_over_time", item, name + "-utilization.png"))
            else:
                notes.append("%s: no utilisation time series (scenario.outputs.timeseries_interval_s = 0); "
                             "no utilisation figure" % item.path)
        elif isinstance(item, inputs.Sweep) and "sweep" in want:
            plan.append(("sweep", "sweep_figure", item, name + "-sweep.png"))
        elif isinstance(item, inputs.Capacity):
            if "latency" in want:
                plan.append(("capacity", "latency_vs_aps", item, name + "-latency.png"))
            if "ttft" in want and any(p.ttft_breakdown_s for p in item.points):
                plan.append(("capacity", "ttft_breakdown", item, name + "-ttft-breakdown.png"))
    return plan, notes


def main(argv):
    args = _parse_args(argv)
    try:
        loaded = [inputs.load(path) for path in args.inputs]
    except inputs.InputError as e:
        sys.stderr.write("plot.py: %s\n" % e)
        return 2
    plan, notes = _plan(loaded, _names(args.inputs), set(args.only))
    modules = _import_figures() if plan else {}  # may re-run the script under SYSTEM_PYTHON
    for note in notes:
        sys.stderr.write("plot.py: %s\n" % note)
    try:
        os.makedirs(args.out, exist_ok=True)
        for module, function, data, name in plan:
            print(getattr(modules[module], function)(data, args.out, name), flush=True)
    except OSError as e:
        sys.stderr.write("plot.py: --out %s: cannot write: %s\n" % (args.out, e.strerror or e))
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
