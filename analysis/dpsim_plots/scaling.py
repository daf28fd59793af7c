"""The append and generation scaling figure (DualPath Fig. 9 layout) from offline run results (inputs.Run).

Run results are grouped by set-up (scenario name, model, P, D) and agent count. Each group whose runs
differ in scenario.workload.append_scale or gen_scale is a row of up to two panels of JCT against the
scale:
  append length      the runs with gen_scale 1, x = append_scale
  generation length  the runs with append_scale 1, x = gen_scale
The runs at x1 (both scales 1) are in both panels; a panel with no scale other than 1 is not drawn. A
run with both scales other than 1 fits neither panel: it is left out (Group.left_out; plot.py says so).

One line per system, named as systems.py names them (Basic, DualPath, Oracle, or the read path and
layerwise flag; a system whose runs in a group use more than one scheduler or layerwise flag gets it in
its label). Several runs of one line at one scale (e.g. seeds) are averaged, their min-max an error
bar. Each scale is annotated with DualPath's speedup over Basic (Basic's JCT /
DualPath's) when both ran. A run stopped before all its turns finished (complete = false) has a JCT that
is only a lower bound: its point is hollow, and a speedup it enters is a bound (">=" when Basic stopped,
"<=" when DualPath did; none when both did).

groups() and the data classes use only the standard library (plot.py plans its figures before it imports
matplotlib); scaling_figure() draws.
"""

from dataclasses import dataclass

from .systems import BASIC, DUALPATH, labels, legend, marker, sort_key

# (panel, its title, the scale on its x axis, the scale that must be 1), in drawing order.
PANELS = (("append", "append length", "append_scale", "gen_scale"),
          ("gen", "generation length", "gen_scale", "append_scale"))


@dataclass
class Point:
    scale: float
    jct_s: float  # mean over the runs at this scale
    low_s: float  # their min and max
    high_s: float
    complete: bool  # every run finished all its turns; else jct_s is a lower bound
    runs: int


@dataclass
class Speedup:
    scale: float
    ratio: float  # Basic's JCT / DualPath's
    bound: str  # "" exact; ">=" Basic stopped early (a lower bound); "<=" DualPath stopped early

    def text(self):
        return "%s%.2f\u00d7" % ({">=": "\u2265", "<=": "\u2264"}.get(self.bound, ""), self.ratio)


@dataclass
class Panel:
    axis: str  # "append" | "gen"
    title: str
    scale_key: str  # "append_scale" | "gen_scale"
    lines: dict  # line label -> [Point] by scale; labels in drawing order
    speedups: list  # [Speedup] by scale


@dataclass
class Group:
    title: str  # e.g. "ds660b-64k (ds660b, 2P4D), 1024 agents"
    panels: list
    runs: list  # the runs drawn
    left_out: list  # the runs with both scales other than 1


def scales_vary(runs):
    """True when the runs have more than one (append_scale, gen_scale)."""
    return len({(r.append_scale, r.gen_scale) for r in runs}) > 1


def groups(runs):
    """The Groups of the offline runs whose scales vary, by set-up and agent count, in first-seen order.
    A group whose only runs off x1 have both scales other than 1 has no panel."""
    by_setup = {}
    for run in runs:
        key = (run.name, run.model, run.prefill_nodes, run.decode_nodes, run.agents)
        by_setup.setdefault(key, []).append(run)
    return [_group(members) for members in by_setup.values() if scales_vary(members)]


def _group(members):
    first = members[0]
    title = "%s, %d agents" % (first.setup(variant=False), first.agents)
    drawn = [r for r in members if r.append_scale == 1 or r.gen_scale == 1]
    left_out = [r for r in members if r.append_scale != 1 and r.gen_scale != 1]
    named = list(zip(drawn, labels(drawn)))
    panels = []
    for axis, panel_title, scale_key, fixed_key in PANELS:
        chosen = [(r, n) for r, n in named if getattr(r, fixed_key) == 1]
        if any(getattr(r, scale_key) != 1 for r, _ in chosen):
            panels.append(_panel(axis, panel_title, scale_key, chosen))
    return Group(title=title, panels=panels, runs=drawn, left_out=left_out)


def _panel(axis, title, scale_key, named):
    """A Panel from (run, label) pairs: a line per label, a point per scale."""
    lines = {}
    for label in sorted({n for _, n in named}, key=sort_key):
        runs = [r for r, n in named if n == label]
        lines[label] = [_point(s, [r for r in runs if getattr(r, scale_key) == s])
                        for s in sorted({getattr(r, scale_key) for r in runs})]
    return Panel(axis=axis, title=title, scale_key=scale_key, lines=lines, speedups=_speedups(lines))


def _point(scale, runs):
    values = [r.jct_s for r in runs]
    return Point(scale=scale, jct_s=sum(values) / len(values), low_s=min(values), high_s=max(values),
                 complete=all(r.complete for r in runs), runs=len(runs))


def _speedups(lines):
    """DualPath's speedup over Basic at each scale where both have a point (none when both stopped)."""
    basic = {p.scale: p for p in lines.get(BASIC, [])}
    out = []
    for dual in lines.get(DUALPATH, []):
        base = basic.get(dual.scale)
        if base is None or not (base.complete or dual.complete) or dual.jct_s <= 0:
            continue
        bound = "" if base.complete and dual.complete else (">=" if dual.complete else "<=")
        out.append(Speedup(scale=dual.scale, ratio=base.jct_s / dual.jct_s, bound=bound))
    return out


# Drawing. The y axis reaches HEADROOM x the highest point, so the row of speedups along the top stays
# clear of the lines; two speedups closer than _CLOSE of the x range sit on alternate heights.
HEADROOM = 1.3
_ROW_Y = (0.97, 0.90)
_CLOSE = 0.12


def _draw_line(ax, label, points, color):
    """One system's line; complete points filled, the others hollow; min-max error bars over repeats."""
    xs, ys = [p.scale for p in points], [p.jct_s for p in points]
    ax.plot(xs, ys, color=color, linewidth=1.5, zorder=2)
    for p in points:
        ax.plot([p.scale], [p.jct_s], marker(label), color=color, markersize=7, markeredgewidth=1.5,
                markerfacecolor=color if p.complete else "white", zorder=3)
    spread = [p for p in points if p.high_s > p.low_s]
    if spread:
        ax.errorbar([p.scale for p in spread], [p.jct_s for p in spread], fmt="none", ecolor=color,
                    capsize=3, yerr=[[p.jct_s - p.low_s for p in spread], [p.high_s - p.jct_s for p in spread]])


def _scale_axis(ax, panel):
    import matplotlib.ticker

    scales = sorted({p.scale for points in panel.lines.values() for p in points})
    span = (scales[-1] - scales[0]) or 1.0
    ax.set_xlim(scales[0] - 0.12 * span, scales[-1] + 0.12 * span)
    ax.xaxis.set_major_locator(matplotlib.ticker.FixedLocator(scales))
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: "\u00d7%g" % v))
    what = "append" if panel.axis == "append" else "generation"
    ax.set_xlabel("workload.%s (\u00d7 each turn's %s length)" % (panel.scale_key, what))


def _speedup_row(ax, speedups, color):
    """The speedups as a row of text along the top of the panel, at their scales."""
    import matplotlib.transforms

    at = matplotlib.transforms.blended_transform_factory(ax.transData, ax.transAxes)
    left, right = ax.get_xlim()
    previous, level = None, 0
    for s in speedups:
        close = previous is not None and s.scale - previous < _CLOSE * (right - left)
        level = 1 - level if close else 0
        ax.text(s.scale, _ROW_Y[level], s.text(), transform=at, ha="center", va="top", fontsize=9,
                fontweight="bold", color=color)
        previous = s.scale


def _draw_panel(ax, panel, colors):
    """Returns True when some point is hollow (a run stopped early)."""
    for label, points in panel.lines.items():
        _draw_line(ax, label, points, colors[label])
    _scale_axis(ax, panel)
    top = max(p.high_s for points in panel.lines.values() for p in points)
    ax.set_ylim(0, max(top, 1e-9) * HEADROOM)
    _speedup_row(ax, panel.speedups, colors.get(DUALPATH, "black"))
    ax.set_ylabel("JCT (s)")
    ax.grid(True, alpha=0.3)
    return any(not p.complete for points in panel.lines.values() for p in points)


def scaling_figure(rows, out_dir, name="scaling.png"):
    """Draws the Groups rows (from groups(), each with at least one panel) as a row of panels each.
    Returns the path written."""
    from . import common  # matplotlib

    all_labels = sorted({lab for g in rows for p in g.panels for lab in p.lines}, key=sort_key)
    colors = dict(zip(all_labels, common.colors(len(all_labels))))
    fig, axes = common.figure(len(rows), 2, 5.2, 4.4)
    any_speedup = False
    for row_axes, group in zip(axes, rows):
        hollow = False
        for ax, panel in zip(row_axes, group.panels):
            hollow |= _draw_panel(ax, panel, colors)
            any_speedup |= bool(panel.speedups)
            ax.set_title(panel.title if len(rows) == 1 else "%s: %s" % (panel.title, group.title), fontsize=10)
        for ax in row_axes[len(group.panels):]:
            ax.set_visible(False)
        drawn = [lab for lab in all_labels if any(lab in p.lines for p in group.panels)]
        legend(row_axes[len(group.panels) - 1], drawn, colors, hollow)
    lines = ["JCT against append and generation length (DualPath Fig. 9 layout)"]
    if len(rows) == 1:
        lines.append(rows[0].title)
    if any_speedup:
        lines.append("along the top: DualPath's speedup over Basic (Basic JCT / DualPath JCT)")
    fig.suptitle("\n".join(lines), fontsize=11)
    return common.save(fig, out_dir, name)
