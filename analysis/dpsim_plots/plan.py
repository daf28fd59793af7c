"""The Pareto figure of a `dpsim plan` output (inputs.Plan).

x = the size the plan minimises (GPUs, or money per hour with --objective cost); y = the judged TTFT
(goal "slo", online) or the JCT (the offline goals), as dpsim's own front in plan.json. Every point run
is a marker, filled when it meets the goal (ok) and hollow when not; a point with no y (no TTFT judged,
no run) or a y above the axis sits on the top edge as a triangle, and the legend counts them. The
front (pareto_front) is a black step line, the recommended point a star labelled "PpDd". Points of
different choices (--set-list: their "sets" differ) get a colour each. The goal's bound is a dotted
line: slo.ttft_s, or jct_target_s; for min_jct_x_size, the curve JCT x size = the recommended point's
value (points under it would have been better) is dashed.
"""

import json

import matplotlib.lines
import matplotlib.ticker
import matplotlib.transforms

from . import common

# The y axis reaches this factor above the highest of: the ok points, the recommended point, the goal's
# line. Points higher than that (typically runs the TTFT rule stopped, at tens of seconds) go on the top
# edge, so the feasible region keeps the height of the figure.
HEADROOM = 1.25
MAX_X_TICKS = 16
_DODGE_PT = 8.0  # horizontal spread, in points, of the top-edge markers of several choices at one x


def _choice_title(sets):
    if not sets:
        return "all points"
    return ", ".join("%s=%s" % (k, v if isinstance(v, str) else json.dumps(v)) for k, v in sets.items())


def _choices(points):
    """The distinct "sets" of the points, first-seen order, as (key, sets)."""
    out = {}
    for p in points:
        out.setdefault(json.dumps(p.sets, sort_keys=True), p.sets)
    return list(out.items())


def _size_text(plan, x):
    return ("%d GPUs" % x) if plan.objective == "gpus" else ("%.4g %s" % (x, plan.size_unit))


def _y_name(plan):
    return "judged TTFT" if plan.goal == "slo" else "JCT"


def _goal_line(plan):
    """(value, legend label) of the goal's horizontal bound, or None."""
    if plan.goal == "slo" and plan.slo_ttft_s is not None:
        stat = (" (%s)" % plan.slo_statistic) if plan.slo_statistic else ""
        return plan.slo_ttft_s, "TTFT SLO = %g s%s" % (plan.slo_ttft_s, stat)
    if plan.goal == "jct_target" and plan.jct_target_s is not None:
        return plan.jct_target_s, "JCT target = %g s" % plan.jct_target_s
    return None


def _top(plan, line):
    base = [p.y for p in plan.points if p.ok and p.y is not None]
    if plan.recommended is not None and plan.recommended.y is not None:
        base.append(plan.recommended.y)
    if line is not None:
        base.append(line[0])
    if not base:  # nothing meets the goal and no bound: fit every point that has a y
        base = [p.y for p in plan.points if p.y is not None]
    peak = max(base, default=0.0)
    return peak * HEADROOM if peak > 0 else 1.0


def _goal_text(plan):
    if plan.goal == "slo":
        bounds = ["TTFT <= %g s" % plan.slo_ttft_s] if plan.slo_ttft_s is not None else []
        if plan.slo_tpot_s is not None:
            bounds.append("TPOT <= %g s" % plan.slo_tpot_s)
        stat = (" (%s)" % plan.slo_statistic) if plan.slo_statistic and bounds else ""
        what = "judged " + " and ".join(bounds) + stat if bounds else "the scenario's SLO"
    elif plan.goal == "jct_target":
        what = "JCT <= %g s" % plan.jct_target_s if plan.jct_target_s is not None else "a JCT target"
    else:
        what = "the least JCT x %s" % plan.size_unit
    least = "fewest GPUs" if plan.objective == "gpus" else "cheapest (%s)" % plan.size_unit
    if plan.goal == "min_jct_x_size":
        return "goal %s: %s" % (plan.goal, what)
    return "goal %s: %s; %s" % (plan.goal, what, least)


def _title(plan):
    lines = ["Pareto front of dpsim plan: %s%s" % (plan.scenario or plan.path,
                                                   " (%s)" % plan.mode if plan.mode else ""),
             _goal_text(plan)]
    runs = "%d run%s" % (plan.runs, "" if plan.runs == 1 else "s")
    if plan.runs_this_invocation is not None and plan.runs_this_invocation != plan.runs:
        runs += " (%d in this invocation)" % plan.runs_this_invocation
    if plan.wall_s is not None:
        runs += ", %.1f s wall" % plan.wall_s
    if plan.sets:
        sets = "; --set " + " ".join(plan.sets)
        runs += sets if len(sets) <= 90 else sets[:87] + "..."
    lines.append(runs)
    return "\n".join(lines)


def _x_axis(ax, plan):
    xs = sorted({p.x for p in plan.points})
    span = (xs[-1] - xs[0]) or max(abs(xs[-1]), 1.0)
    ax.set_xlim(xs[0] - 0.08 * span, xs[-1] + 0.08 * span)
    if len(xs) <= MAX_X_TICKS:
        ax.xaxis.set_major_locator(matplotlib.ticker.FixedLocator(xs))
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: "%g" % v))
    ax.set_xlabel("cluster size (%s)" % plan.size_unit)


def _draw_points(ax, plan, top, choice_color):
    """Every point: circles at their y, triangles on the top edge. Returns the points on the top edge
    with no y, and the ys of those above the axis."""
    ids = [key for key, _ in _choices(plan.points)]
    edge = {}  # (x, choice) -> [points] on the top edge
    for p in plan.points:
        key = json.dumps(p.sets, sort_keys=True)
        color = choice_color[key]
        if p.y is None or p.y > top:
            edge.setdefault((p.x, key), []).append(p)
            continue
        ax.plot([p.x], [p.y], "o", markersize=7, color=color, markerfacecolor=color if p.ok else "none",
                markeredgewidth=1.3, zorder=3)
    for (x, key), members in edge.items():
        shift = (ids.index(key) - (len(ids) - 1) / 2.0) * _DODGE_PT
        at = matplotlib.transforms.offset_copy(ax.transData, fig=ax.figure, x=shift, y=0, units="points")
        color = choice_color[key]
        filled = any(p.ok for p in members)
        ax.plot([x], [top], "^", markersize=8, color=color, markerfacecolor=color if filled else "none",
                markeredgewidth=1.3, transform=at, clip_on=False, zorder=3)
        if len(members) > 1:
            ax.annotate("%d" % len(members), (x, top), xycoords=at, xytext=(0, -13),
                        textcoords="offset points", ha="center", fontsize=7, color=color)
    on_edge = [p for group in edge.values() for p in group]
    return sum(1 for p in on_edge if p.y is None), [p.y for p in on_edge if p.y is not None]


def _draw_front(ax, plan):
    by_name = {p.name: p for p in plan.points}
    front = sorted((by_name[n] for n in plan.front), key=lambda p: (p.x, p.y))
    if not front:
        return 0
    xs, ys = [p.x for p in front], [p.y for p in front]
    right = max(p.x for p in plan.points)
    if right > xs[-1]:  # the region the front dominates runs on to the largest size tried
        xs, ys = xs + [right], ys + [ys[-1]]
    ax.step(xs, ys, where="post", color="black", linewidth=1.2, zorder=2)
    rec = plan.recommended.name if plan.recommended is not None else None
    for p in front:
        if p.name != rec:
            ax.annotate(p.label(), (p.x, p.y), xytext=(4, 4), textcoords="offset points", fontsize=7,
                        color="0.25")
    return len(front)


def _draw_recommended(ax, plan, top):
    rec = plan.recommended
    if rec is None:
        ax.text(0.5, 0.5, "no point meets the goal: no recommendation", transform=ax.transAxes,
                ha="center", color="tab:red")
        return None
    y = rec.y if rec.y is not None and rec.y <= top else top
    ax.plot([rec.x], [y], "*", markersize=20, markerfacecolor="gold", markeredgecolor="black", zorder=5,
            clip_on=False)
    ax.annotate(rec.label(), (rec.x, y), xytext=(9, 7), textcoords="offset points", fontsize=10,
                fontweight="bold")
    label = "recommended: %s, %s" % (rec.label(), _size_text(plan, rec.x))
    if plan.goal == "min_jct_x_size" and plan.objective_value is not None:
        label += ", JCT x size = %.4g" % plan.objective_value
    if rec.sets and len(_choices(plan.points)) > 1:
        label += "\n  " + _choice_title(rec.sets)
    return label


def _draw_goal(ax, plan, line, top):
    """The goal's bound as a dotted line; for min_jct_x_size the curve through the recommended point.
    Returns the legend handles."""
    handles = []
    if line is not None:
        ax.axhline(line[0], color="black", linestyle=":", linewidth=1.2)
        handles.append(matplotlib.lines.Line2D([], [], color="black", linestyle=":", label=line[1]))
    elif plan.goal == "min_jct_x_size" and plan.recommended is not None and plan.objective_value:
        lo, hi = ax.get_xlim()
        lo = max(lo, plan.objective_value / top)  # where the curve enters the axes
        if hi > lo > 0:
            xs = [lo + (hi - lo) * i / 100.0 for i in range(101)]
            ax.plot(xs, [plan.objective_value / x for x in xs], color="0.5", linestyle="--", linewidth=1,
                    zorder=1)
            handles.append(matplotlib.lines.Line2D(
                [], [], color="0.5", linestyle="--",
                label="JCT x size = %.4g (the recommended point's)" % plan.objective_value))
    return handles


def pareto_figure(plan, out_dir, name):
    choices = _choices(plan.points)
    several = len(choices) > 1
    choice_color = {key: color for (key, _), color in zip(choices, common.colors(len(choices)))}
    line = _goal_line(plan)
    top = _top(plan, line)
    fig, axes = common.figure(1, 1, 10.0, 5.2)
    ax = axes[0, 0]
    _x_axis(ax, plan)
    ax.set_ylim(0, top)
    no_y, above = _draw_points(ax, plan, top, choice_color)
    n_front = _draw_front(ax, plan)
    rec_label = _draw_recommended(ax, plan, top)
    goal_handles = _draw_goal(ax, plan, line, top)
    ax.set_ylabel("%s (%ss)" % (_y_name(plan), "%s, " % plan.slo_statistic
                                if plan.goal == "slo" and plan.slo_statistic else ""))
    ax.grid(True, alpha=0.3)

    Line = matplotlib.lines.Line2D
    handles = []
    if several:
        handles += [Line([], [], marker="o", linestyle="none", color=choice_color[key],
                         label=_choice_title(sets)) for key, sets in choices]
    neutral = "0.3" if several else choice_color[choices[0][0]]
    n_ok = sum(1 for p in plan.points if p.ok)
    handles.append(Line([], [], marker="o", linestyle="none", color=neutral,
                        label="meets the goal (ok): %d" % n_ok))
    handles.append(Line([], [], marker="o", linestyle="none", color=neutral, markerfacecolor="none",
                        markeredgewidth=1.3, label="misses it: %d" % (len(plan.points) - n_ok)))
    if no_y or above:
        parts = ["%d with no %s" % (no_y, _y_name(plan))] if no_y else []
        if above:
            parts.append("%d above the axis (up to %.3g s)" % (len(above), max(above)))
        handles.append(Line([], [], marker="^", linestyle="none", color=neutral, markerfacecolor="none",
                            markeredgewidth=1.3, label="on the top edge: %s" % ", ".join(parts)))
    if n_front:
        handles.append(Line([], [], color="black", linewidth=1.2, label="Pareto front: %d point%s"
                            % (n_front, "" if n_front == 1 else "s")))
    if rec_label:
        handles.append(Line([], [], marker="*", linestyle="none", markersize=14, markerfacecolor="gold",
                            markeredgecolor="black", label=rec_label))
    handles += goal_handles
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle(_title(plan), fontsize=10)
    return common.save(fig, out_dir, name)
