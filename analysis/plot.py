#!/usr/bin/env python3
"""Plots dpsim's JSON outputs and per-turn records as PNGs.

    python3 analysis/plot.py INPUT... --out DIR [--only FIGURES] [--after SECONDS] [--bin SECONDS]

An input ending in .csv or .jsonl is a per-turn records file (dpsim run --set outputs.requests=FILE):
its header (CSV) or each line's keys (JSONL) must name ttft_s, tpot_s and first_token_s; it is read as
a stream, keeping only TTFT, first-token time and TPOT. Any other input is a run result (dpsim run), a
sweep summary (kind "sweep"), a capacity result (kind "capacity") or a plan (kind "plan": dpsim plan's
plan.json); the kind is detected from the content. Writes into DIR (created if needed), printing one
line per PNG:
  jct.png                      JCT bars per read-path policy against agents (>= 2 offline run results)
  scaling.png                  JCT of Basic, DualPath, Oracle against workload.append_scale and gen_scale
                               (DualPath Fig. 9 layout), when offline run results of one set-up and
                               agent count differ in those scales; such runs at a scale other than 1
                               are left out of jct.png
  storage-capacity.png         storage miss ratio, JCT, TTFT mean/p99 and evicted bytes against
                               scenario.storage.capacity_bytes (0 = unlimited, at the right end), a line
                               per system, the working set marked, when run results of one set-up differ
                               in it (not dpsim capacity's result: that is <input>-latency.png)
  dram-tier.png                JCT, storage reads, the tier's hit rate and TTFT mean/p99 against
                               scenario.cache.dram_bytes per node (0 = no tier, at the left end), when run
                               results of one set-up differ in it; runs these two figures draw at a size
                               other than 0 are left out of jct.png
  latency.png                  TTFT/TPOT p50, p99 against APS (online run results at >= 2 rates)
  ttft-breakdown.png           TTFT breakdown, one stacked bar per run result
  <input>-utilization.png      per run result: utilisation over time per SNIC/CNIC/DRAM/PCIe/storage/GPU
  <input>-sweep.png            per sweep summary: utilisation per resource class against P/D
  <input>-latency.png          per capacity result: latency against APS with the SLO lines
  <input>-ttft-breakdown.png   per capacity result: TTFT breakdown per APS point
  <input>-pareto.png           per plan: judged TTFT (online) or JCT (offline) against the size (GPUs or
                               money per hour), every point run, the Pareto front, the recommended point
  latency-cdf.png              TTFT and TPOT CDFs, one curve per records file, p50/p99 marked; the SLOs
                               of a run result given beside a records file (r.json for r.csv) as lines
  ttft-over-time.png           TTFT against simulated time: the mean and the p99 of the turns whose first
                               token came in each bin of first-token time, one colour per records file,
                               the turns per bin beneath; the events that acted in a run result given
                               beside a records file shaded
<input> is the file name without its extension (with its folder's name in front when two inputs share
it); records files are named apart from the JSON inputs, so r.csv and r.json may go together.
--only jct,ttft,... writes only those figure families (names: jct, latency, ttft, utilization, sweep,
cdf, ttft-time, plan, scaling, storage-capacity, dram-tier). --after SECONDS keeps, in latency-cdf.png and
ttft-over-time.png, only the turns whose first_token_s is > SECONDS (the SLO warm-up: a run result's
summary.slo.warmup_end_s), and the title says so. --bin SECONDS sets ttft-over-time.png's bin width
(default: the span of the first-token times drawn / 60, rounded to the nearest 1, 2 or 5 times a power
of ten, e.g. 50 s for a run of an hour); bins start at 0 s, or at --after.

Exit codes: 0 = done; 2 = bad command line, an input that is not a readable dpsim output (the message
names the file, the JSON path or the line and column, and what was expected), or DIR cannot be
written; 3 = matplotlib is missing. Needs only Python 3 and matplotlib (Debian: python3-matplotlib).
"""

import argparse
import importlib.util
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# After the path set-up; standard library only (scaling's and tiers' drawing import matplotlib when called).
from dpsim_plots import inputs, records, scaling, tiers  # noqa: E402

# Debian's python3-matplotlib installs for the system interpreter; when `python3` on PATH is another
# one (pyenv, a virtualenv) without matplotlib, the script re-runs itself under this interpreter.
SYSTEM_PYTHON = "/usr/bin/python3"
_REEXEC_ENV = "DPSIM_PLOT_REEXEC"
# Figure families, as --only names them (a capacity result gives a "latency" and a "ttft" figure).
FIGURES = ("jct", "latency", "ttft", "utilization", "sweep", "cdf", "ttft-time", "plan", "scaling",
           "storage-capacity", "dram-tier")


def _figure_list(text):
    chosen = [f.strip() for f in text.split(",") if f.strip()]
    unknown = [f for f in chosen if f not in FIGURES]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError("unknown figure %s; expected a comma-separated subset of: %s"
                                         % (", ".join(unknown) or "list ''", ",".join(FIGURES)))
    return chosen


def _seconds(text):
    """--after: a finite number >= 0."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError("expected a number of seconds >= 0, got %r" % text)
    return value


def _bin_seconds(text):
    """--bin: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError("expected a number of seconds > 0, got %r" % text)
    return value


def _parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="plot.py", description="Plot dpsim run results, sweep summaries, capacity results, plans "
                                    "and per-turn records as PNGs.")
    parser.add_argument("inputs", nargs="+", metavar="INPUT",
                        help="JSON files written by dpsim, or per-turn records files (.csv, .jsonl)")
    parser.add_argument("--out", required=True, metavar="DIR", help="directory for the PNGs (created)")
    parser.add_argument("--only", metavar="FIGURES", type=_figure_list, default=FIGURES,
                        help="comma-separated subset of: %s (default: all)" % ",".join(FIGURES))
    parser.add_argument("--after", metavar="SECONDS", type=_seconds, default=None,
                        help="latency-cdf.png, ttft-over-time.png: only turns whose first_token_s is > "
                             "SECONDS (e.g. a run result's summary.slo.warmup_end_s)")
    parser.add_argument("--bin", metavar="SECONDS", type=_bin_seconds, default=None,
                        help="ttft-over-time.png: the bin width of first-token time (default: the span of "
                             "the first-token times drawn / 60, rounded to 1, 2 or 5 times a power of ten)")
    return parser.parse_args(argv)


def _reexec_under_system_python():
    """Re-runs the script under SYSTEM_PYTHON when that is another interpreter, once (the environment
    variable stops a loop); returns when it does not."""
    here = os.path.realpath(sys.executable or "")
    if (os.environ.get(_REEXEC_ENV) is None and os.access(SYSTEM_PYTHON, os.X_OK)
            and os.path.realpath(SYSTEM_PYTHON) != here):
        sys.stdout.flush()
        os.environ[_REEXEC_ENV] = "1"
        os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON, os.path.abspath(__file__)] + sys.argv[1:])


def _import_figures():
    """Imports the figure modules, re-running under SYSTEM_PYTHON when matplotlib is missing here."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        _reexec_under_system_python()
        sys.stderr.write("plot.py: matplotlib is not installed for %s; install Debian's python3-matplotlib "
                         "(apt-get install python3-matplotlib) and run with %s\n"
                         % (sys.executable, SYSTEM_PYTHON))
        sys.exit(3)
    from dpsim_plots import capacity, cdf, plan, runs, sweep, ttft_time

    return {"capacity": capacity, "cdf": cdf, "plan": plan, "runs": runs, "scaling": scaling,
            "sweep": sweep, "tiers": tiers, "ttft_time": ttft_time}


def _names(paths):
    """A distinct file-name stem per input: the name without its extension (.json, .csv, .jsonl),
    prefixed by its folder's name (then numbered) when two inputs share it."""
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


def _input_names(paths):
    """_names of the records files and of the JSON inputs, each kind apart (r.csv and r.json are both
    "r"), in the order of paths."""
    names = [None] * len(paths)
    for kind in (True, False):
        chosen = [i for i, p in enumerate(paths) if records.is_records(p) == kind]
        for i, name in zip(chosen, _names([paths[i] for i in chosen])):
            names[i] = name
    return names


def _stem(path):
    return os.path.splitext(os.path.abspath(path))[0]


def _record_curves(loaded, names, notes):
    """(label, Records, Run or None) per records input with a turn kept; the Run is the run result
    given with the same path but .json (out/r.json for out/r.csv), whose SLOs latency-cdf.png draws
    and whose events ttft-over-time.png shades."""
    runs_by_stem = {_stem(x.path): x for x in loaded if isinstance(x, inputs.Run)}
    curves = []
    for item, name in zip(loaded, names):
        if not isinstance(item, records.Records):
            continue
        if item.kept():
            curves.append((name, item, runs_by_stem.get(_stem(item.path))))
        elif item.turns:
            notes.append("%s: no turn with first_token_s > %g (--after) among its %d; no curve"
                         % (item.path, item.after, item.turns))
        else:
            notes.append("%s: no records; no curve" % item.path)
    return curves


def _records_figures(loaded, names, want, bin_s):
    """The entries of latency-cdf.png and ttft-over-time.png in the plan, and their notes."""
    notes = []
    if not want & {"cdf", "ttft-time"}:
        return [], notes
    curves = _record_curves(loaded, names, notes)
    if not curves:
        return [], notes
    plan = [("cdf", "latency_cdf", curves, "latency-cdf.png")] if "cdf" in want else []
    if "ttft-time" in want:
        given = bin_s is not None
        if not given:
            bin_s = records.readable_bin(records.first_token_span([rec for _, rec, _ in curves]))
        plan.append(("ttft_time", "ttft_over_time", (curves, bin_s, given), "ttft-over-time.png"))
    return plan, notes


def _scaling(groups, offline, notes):
    """The scaling figure's entry in the plan ([] when no group has a panel), and its notes."""
    for run in (r for g in groups for r in g.left_out):
        notes.append("%s: append_scale %g and gen_scale %g are both other than 1: in neither panel of "
                     "scaling.png" % (run.path, run.append_scale, run.gen_scale))
    rows = [g for g in groups if g.panels]
    if not rows and scaling.scales_vary(offline):
        notes.append("the offline run results differ in append_scale or gen_scale, but no set-up and agent "
                     "count has runs that differ in one of them with the other at 1: no scaling.png")
    return [("scaling", "scaling_figure", rows, "scaling.png")] if rows else []


def _tiers(tier_groups, run_results, want, notes):
    """The entries of the KV-tier figures in the plan, and their notes."""
    plan = []
    for knob in tiers.KNOBS:
        if knob.figure not in want:
            continue
        if tier_groups[knob.figure]:
            plan.append(("tiers", "tier_figure", tier_groups[knob.figure], knob.figure + ".png"))
        elif tiers.varies(run_results, knob):
            notes.append("the run results differ in %s, but no set-up has runs that differ in it alone: "
                         "no %s.png" % (knob.field, knob.figure))
    return plan


def _left_out_of_jct(scaled, tier_groups, notes):
    """The runs jct.png leaves out, by id: those scaling.png draws at a scale other than 1 and those a
    KV-tier figure draws at a size other than 0 (unlimited storage, no DRAM tier); a note for each figure."""
    if scaled:
        notes.append("jct.png leaves out the %d run results that scaling.png draws at an append_scale or "
                     "gen_scale other than 1" % len(scaled))
    out = {id(r) for r in scaled}
    for knob in tiers.KNOBS:
        sized = [r for g in tier_groups[knob.figure] for r in g.runs if tiers.size_of(r, knob) > 0]
        if sized:
            notes.append("jct.png leaves out the %d run results that %s.png draws at a %s other than %s"
                         % (len(sized), knob.figure, knob.field, "0 (%s)" % knob.zero))
        out |= {id(r) for r in sized}
    return out


def _plan(loaded, names, want, bin_s=None):
    """The figures to draw, as (module, function, data, file name) in output order, and the notes for
    stderr. Decided before matplotlib is imported, so inputs that give no figure cost no import."""
    run_results = [x for x in loaded if isinstance(x, inputs.Run)]
    offline = [r for r in run_results if r.mode == "offline"]
    online = [r for r in run_results if r.mode == "online" and r.aps is not None]
    plan, notes = [], []
    groups = scaling.groups(offline)
    scaled = [r for g in groups if g.panels for r in g.runs if r.scales()]  # drawn in scaling.png
    tier_groups = {knob.figure: tiers.groups(run_results, knob) for knob in tiers.KNOBS}
    jct_notes = []
    left_out = _left_out_of_jct(scaled, tier_groups, jct_notes)
    bars = [r for r in offline if id(r) not in left_out]
    if "jct" in want and len(bars) >= 2:
        plan.append(("runs", "jct_bars", bars, "jct.png"))
    if "jct" in want:
        notes += jct_notes
    if "scaling" in want:
        plan += _scaling(groups, offline, notes)
    plan += _tiers(tier_groups, run_results, want, notes)
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
        elif isinstance(item, inputs.Plan) and "plan" in want:
            plan.append(("plan", "pareto_figure", item, name + "-pareto.png"))
    records_plan, records_notes = _records_figures(loaded, names, want, bin_s)
    return plan + records_plan, notes + records_notes


def main(argv):
    args = _parse_args(argv)
    if importlib.util.find_spec("matplotlib") is None:
        # Switch interpreters before reading the inputs, not after: a records file of millions of
        # lines is then read once. (Finding the module imports nothing.)
        _reexec_under_system_python()
    try:
        loaded = [records.load(path, args.after) if records.is_records(path) else inputs.load(path)
                  for path in args.inputs]
    except inputs.InputError as e:
        sys.stderr.write("plot.py: %s\n" % e)
        return 2
    plan, notes = _plan(loaded, _input_names(args.inputs), set(args.only), args.bin)
    for option, value in (("--after", args.after), ("--bin", args.bin)):
        if value is not None and not any(isinstance(x, records.Records) for x in loaded):
            notes.append("%s applies to per-turn records files (.csv, .jsonl); none given" % option)
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
