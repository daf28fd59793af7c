"""The KV-tier figures from run results (inputs.Run): metrics against the size of one KV tier.

  storage-capacity.png  x = scenario.storage.capacity_bytes (TB); 0 = unlimited, drawn at the right end.
                        Panels: the storage miss ratio (1 - summary.storage.hit_rate), JCT, TTFT mean and
                        p99, the bytes evicted from storage (summary.storage.evicted_bytes). A dotted line
                        marks the working set: summary.storage.stored_bytes_peak of the unlimited runs.
  dram-tier.png         x = scenario.cache.dram_bytes, per node (GB); 0 = no tier, drawn at the left end.
                        Panels: JCT, the bytes read from storage through the SNICs
                        (summary.storage_read_bytes), the tier's hit rate (summary.dram_tier.hit_rate; 0
                        without a tier), TTFT mean and p99.
(Not the capacity of `dpsim capacity`, the largest APS that meets an SLO: capacity.py draws that.)

Run results are grouped by set-up (scenario name, model, P, D, agents, mode and APS, the workload's
append and gen scales) and by the other tier's size; each group whose runs differ in the figure's tier
size is a row of panels. One line per system, named as systems.py names them. Several runs of a line at
one size (e.g. seeds) are averaged, their min-max an error bar. A run stopped before all its turns
finished (complete = false) is drawn hollow: its JCT is a lower bound, its other numbers partial.

groups() and the data classes use only the standard library (plot.py plans its figures before it imports
matplotlib); tier_figure() draws.
"""

import dataclasses
import math
from dataclasses import dataclass

from . import systems
from .inputs import short_number


@dataclass(frozen=True)
class Metric:
    stat: str  # "" alone in its panel, else its line style's name: "mean" (solid), "p99" (dashed)
    value: object  # Run -> the number drawn, or None (no point)


@dataclass(frozen=True)
class PanelSpec:
    key: str  # e.g. "miss", "jct"
    title: str
    ylabel: str
    metrics: tuple  # Metrics
    percent: bool = False  # values are fractions, drawn in %
    log: bool = False  # log y (unless a value is <= 0)


@dataclass(frozen=True)
class Knob:
    """A figure's x axis: one KV tier's size."""
    figure: str  # the --only name and the file's stem
    attr: str  # the inputs.Run attribute on x, bytes
    other: str  # the other tier's attribute, fixed within a group
    field: str  # its scenario key
    unit: str  # "TB" | "GB"
    unit_bytes: float
    zero: str  # what size 0 means, its tick's label
    zero_right: bool  # size 0 drawn at the right end (unlimited), else at the left (no tier)
    title: str
    panels: tuple  # PanelSpecs


def _miss_ratio(run):
    return None if run.storage is None else 1.0 - run.storage.hit_rate


def _terabytes(value):
    return None if value is None else value / 1e12


def _tier_hit_rate(run):
    return run.dram_tier.hit_rate if run.dram_tier is not None else 0.0


_JCT = PanelSpec("jct", "job completion time", "JCT (s)", (Metric("", lambda r: r.jct_s),))
_TTFT = PanelSpec("ttft", "time to first token", "TTFT (s)",
                  (Metric("mean", lambda r: r.ttft_s.get("mean")),
                   Metric("p99", lambda r: r.ttft_s.get("p99"))), log=True)
STORAGE = Knob(
    figure="storage-capacity", attr="storage_capacity_bytes", other="dram_bytes",
    field="storage.capacity_bytes", unit="TB", unit_bytes=1e12, zero="unlimited", zero_right=True,
    title="KV storage capacity (storage.capacity_bytes)",
    panels=(PanelSpec("miss", "storage miss ratio", "context tokens not found stored (%)",
                      (Metric("", _miss_ratio),), percent=True),
            _JCT, _TTFT,
            PanelSpec("evicted", "evicted from storage", "evicted (TB)",
                      (Metric("", lambda r: _terabytes(r.storage and r.storage.evicted_bytes)),))))
DRAM = Knob(
    figure="dram-tier", attr="dram_bytes", other="storage_capacity_bytes",
    field="cache.dram_bytes", unit="GB", unit_bytes=1e9, zero="no tier", zero_right=False,
    title="KV tier in each node's DRAM (cache.dram_bytes)",
    panels=(_JCT,
            PanelSpec("read", "bytes read from storage (SNICs)", "storage reads (TB)",
                      (Metric("", lambda r: _terabytes(r.storage_read_bytes)),)),
            PanelSpec("tier_hit", "DRAM-tier hit rate", "hit tokens taken from a DRAM tier (%)",
                      (Metric("", _tier_hit_rate),), percent=True),
            _TTFT))
KNOBS = (STORAGE, DRAM)


@dataclass
class Point:
    size: float  # the tier's size, bytes; 0 = unlimited / no tier
    value: float  # mean over the runs at this size
    low: float  # their min and max
    high: float
    complete: bool  # every run finished all its turns
    runs: int


@dataclass
class Panel:
    spec: PanelSpec
    lines: dict  # (system label, Metric.stat) -> [Point] in x order (size 0 last when unlimited, else first)


@dataclass
class Group:
    title: str  # e.g. "ds660b-64k (ds660b, 2P4D), 1024 agents"
    knob: Knob
    sizes: list  # the sizes run, in x order
    panels: list
    runs: list
    working_set_bytes: object  # storage: the largest stored_bytes_peak of the unlimited runs; else None


def size_of(run, knob):
    return getattr(run, knob.attr)


def varies(runs, knob):
    """True when the runs have more than one size of the knob's tier."""
    return len({size_of(r, knob) for r in runs}) > 1


def _setup_key(run, knob):
    return (run.name, run.model, run.prefill_nodes, run.decode_nodes, run.agents, run.mode, run.aps,
            run.append_scale, run.gen_scale, getattr(run, knob.other))


def groups(runs, knob):
    """The Groups of the runs whose knob's size varies within a set-up, in first-seen order."""
    by_setup = {}
    for run in runs:
        by_setup.setdefault(_setup_key(run, knob), []).append(run)
    return [_group(members, knob) for members in by_setup.values() if varies(members, knob)]


def _order(knob):
    """Sort key of sizes in x order: 0 first (no tier) or last (unlimited)."""
    return lambda size: ((size == 0) == knob.zero_right, size)


def _title(run, knob):
    parts = [run.setup(variant=False), "%d agents" % run.agents]
    if run.mode == "online" and run.aps is not None:
        parts.append("online at %g APS" % run.aps)
    # The workload's scales and the other tier (the knob's own size zeroed out of the text).
    variant = dataclasses.replace(run, **{knob.attr: 0.0}).variant()
    return ", ".join(parts + ([variant] if variant else []))


def _group(members, knob):
    named = list(zip(members, systems.labels(members)))
    order = _order(knob)
    sizes = sorted({size_of(r, knob) for r in members}, key=order)
    panels = [Panel(spec=spec, lines=_lines(spec, named, knob)) for spec in knob.panels]
    unlimited = [r.storage.stored_bytes_peak for r in members
                 if knob is STORAGE and size_of(r, knob) == 0 and r.storage is not None]
    return Group(title=_title(members[0], knob), knob=knob, sizes=sizes, panels=panels, runs=members,
                 working_set_bytes=max(unlimited) if unlimited else None)


def _lines(spec, named, knob):
    """{(label, stat): [Point]} of a panel from (run, label) pairs; a run whose metric is None gives no
    point."""
    lines = {}
    for label in sorted({n for _, n in named}, key=systems.sort_key):
        runs = [r for r, n in named if n == label]
        for metric in spec.metrics:
            points = [_point(size, metric, [r for r in runs if size_of(r, knob) == size])
                      for size in sorted({size_of(r, knob) for r in runs}, key=_order(knob))]
            points = [p for p in points if p is not None]
            if points:
                lines[(label, metric.stat)] = points
    return lines


def _point(size, metric, runs):
    chosen = [(r, metric.value(r)) for r in runs]
    chosen = [(r, v) for r, v in chosen if v is not None]
    if not chosen:
        return None
    values = [v for _, v in chosen]
    return Point(size=size, value=sum(values) / len(values), low=min(values), high=max(values),
                 complete=all(r.complete for r, _ in chosen), runs=len(chosen))


# Drawing.
_STYLES = {"": "-", "mean": "-", "p99": "--"}
_LOG_X_RATIO = 20  # log x when the largest size is at least this many times the smallest (other than 0)
_ZERO_GAP = 0.25  # the 0 size sits this far beyond the others, as a fraction of their span (or decades)
# Two tick labels of n and m characters (fontsize 8) need (n + m) / 2 x _TICK_CHAR + _TICK_PAD of the axis
# between their centres (a panel's axis is about 300 pixels wide); a size's label short of that from the
# previous label is left out (its tick stays).
_TICK_CHAR, _TICK_PAD = 0.018, 0.02


def _positions(group):
    """(x of each size in the knob's unit, log x?): size 0 one gap beyond the end it is drawn at (beyond
    the working set too, when it is unlimited); with no tier on a linear axis, at 0."""
    knob, sizes = group.knob, group.sizes
    finite = [s / knob.unit_bytes for s in sizes if s > 0]
    if group.working_set_bytes:
        finite.append(group.working_set_bytes / knob.unit_bytes)
    low, high = min(finite), max(finite)
    log = high / low >= _LOG_X_RATIO
    out = {s: s / knob.unit_bytes for s in sizes if s > 0}
    if 0 in sizes:
        if log:
            step = (high / low) ** _ZERO_GAP
            out[0] = high * step if knob.zero_right else low / step
        elif knob.zero_right:
            out[0] = high + ((high - low) or high) * _ZERO_GAP
        else:
            out[0] = 0.0
    return out, log


def _tick_labels(ax, group, xs, log):
    """A label per size, in x order; a finite size's label that would touch the previous one is left out
    (its tick stays). REQUIRES the axis' limits set."""
    def where(x):
        return math.log10(x) if log else x

    low, high = (where(v) for v in ax.get_xlim())
    out, last = [], None  # last: (where, label) of the previous label shown
    for size in sorted(group.sizes, key=lambda s: xs[s]):
        at = (where(xs[size]) - low) / (high - low)
        text = group.knob.zero if size == 0 else short_number(size / group.knob.unit_bytes)
        need = _TICK_PAD + _TICK_CHAR * (len(text) + len(last[1])) / 2 if last else 0
        crowded = last is not None and at - last[0] < need and size != 0
        out.append("" if crowded else text)
        last = last if crowded else (at, text)
    return out


def _size_axis(ax, group, xs, log):
    """The x axis: a tick per size (size 0 labelled with what it means). REQUIRES everything drawn."""
    import matplotlib.ticker

    knob = group.knob
    if log:
        ax.set_xscale("log")
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_xticks(sorted(xs[s] for s in group.sizes))
    ax.set_xticklabels(_tick_labels(ax, group, xs, log), fontsize=8)
    per_node = ", per node" if knob is DRAM else ""
    ax.set_xlabel("%s (%s%s%s)" % (knob.field, knob.unit, per_node, ", log" if log else ""))


def _draw_line(ax, label, stat, points, xs, color):
    """One line; a dotted segment to the point at size 0 (it is not on the scale); hollow points for runs
    stopped early; min-max error bars over repeats."""
    style = _STYLES.get(stat, "-")
    sized = [p for p in points if p.size > 0]
    ax.plot([xs[p.size] for p in sized], [p.value for p in sized], color=color, linestyle=style,
            linewidth=1.5, zorder=2)
    zero = [p for p in points if p.size == 0]
    if zero and sized:
        end = sized[-1] if zero[0] is points[-1] else sized[0]
        ax.plot([xs[end.size], xs[0]], [end.value, zero[0].value], color=color, linestyle=":", linewidth=1.2,
                zorder=2)
    for p in points:
        ax.plot([xs[p.size]], [p.value], systems.marker(label), color=color,
                markersize=5 if stat == "p99" else 6, markeredgewidth=1.5,
                markerfacecolor=color if p.complete else "white", zorder=3)
    spread = [p for p in points if p.high > p.low]
    if spread:
        ax.errorbar([xs[p.size] for p in spread], [p.value for p in spread], fmt="none", ecolor=color,
                    capsize=3, yerr=[[p.value - p.low for p in spread], [p.high - p.value for p in spread]])


def _minor_log_tick(value, _):
    """A log axis' minor tick labelled at 2x and 5x a power of ten, so a decade or two still has numbers."""
    mantissa = value / 10 ** math.floor(math.log10(value))
    return short_number(value) if round(mantissa) in (2, 5) else ""


def _log_label(label):
    """"TTFT (s)" -> "TTFT (s, log)"."""
    return label[:-1] + ", log)" if label.endswith(")") else label + " (log)"


def _draw_panel(ax, group, panel, xs, log, colors):
    """Returns True when some point is hollow (a run stopped early)."""
    import matplotlib.ticker

    for (label, stat), points in panel.lines.items():
        _draw_line(ax, label, stat, points, xs, colors[label])
    if group.working_set_bytes is not None:
        ax.axvline(group.working_set_bytes / group.knob.unit_bytes, color="0.4", linestyle=(0, (1, 2)),
                   linewidth=1.2, zorder=1)
    _size_axis(ax, group, xs, log)
    spec = panel.spec
    values = [v for points in panel.lines.values() for p in points for v in (p.low, p.high)]
    if spec.log and values and min(values) > 0:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: short_number(v)))
        ax.yaxis.set_minor_formatter(matplotlib.ticker.FuncFormatter(_minor_log_tick))
        ax.set_ylabel(_log_label(spec.ylabel))
    else:
        top = max(values + [0.0])
        ax.set_ylim(0, top * 1.1 if top > 0 else (0.01 if spec.percent else 1.0))
        ax.set_ylabel(spec.ylabel)
    if spec.percent:
        ax.yaxis.set_major_formatter(matplotlib.ticker.PercentFormatter(xmax=1.0))
    ax.set_title(spec.title, fontsize=10)
    ax.grid(True, alpha=0.3)
    return any(not p.complete for points in panel.lines.values() for p in points)


def _extra_handles(group):
    """A group's legend entries after the systems: the TTFT panel's line styles, the working set."""
    import matplotlib.lines

    handles = [matplotlib.lines.Line2D([], [], color="0.3", linestyle=_STYLES[stat], label="TTFT %s" % stat)
               for stat in ("mean", "p99") if any(stat == s for p in group.panels for _, s in p.lines)]
    if group.working_set_bytes is not None:
        terabytes = short_number(group.working_set_bytes / 1e12)
        text = "working set: %s TB\n(stored_bytes_peak, unlimited)" % terabytes
        handles.append(matplotlib.lines.Line2D([], [], color="0.4", linestyle=(0, (1, 2)), label=text))
    return handles


def tier_figure(rows, out_dir, name):
    """Draws the Groups rows (from groups(), all of one Knob) as a row of panels each. Returns the path."""
    from . import common  # matplotlib

    knob = rows[0].knob
    all_labels = sorted({lab for g in rows for p in g.panels for lab, _ in p.lines}, key=systems.sort_key)
    colors = dict(zip(all_labels, common.colors(len(all_labels))))
    fig, axes = common.figure(len(rows), len(knob.panels), 4.3, 4.3)
    for row_axes, group in zip(axes, rows):
        xs, log = _positions(group)
        hollow = False
        for ax, panel in zip(row_axes, group.panels):
            hollow |= _draw_panel(ax, group, panel, xs, log, colors)
            if len(rows) > 1:
                ax.set_title("%s\n%s" % (panel.spec.title, group.title), fontsize=9)
        drawn = [lab for lab in all_labels if any(lab == l for p in group.panels for l, _ in p.lines)]
        systems.legend(row_axes[-1], drawn, colors, hollow, _extra_handles(group))
    lines = [knob.title]
    if len(rows) == 1:
        lines.append(rows[0].title)
    fig.suptitle("\n".join(lines), fontsize=11)
    return common.save(fig, out_dir, name)
