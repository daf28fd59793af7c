"""The P/D sweep figure from a sweep summary (inputs.Sweep).

One column per combination of the sweep's other settings (a point's "sets", e.g. the read-path
policy). Top: utilisation of every resource class against P/D (log x), with the analytic bounds
(analytic_range) as vertical lines and the measured bottleneck-free range shaded. Bottom: JCT against
P/D, bottleneck-free points filled, the others hollow and labelled with the resource that saturated
first.
"""

import json

import matplotlib.ticker

from . import common

MAX_COLUMNS = 3
_MARKERS = ("o", "s", "^", "D", "v", "P")


def _combo_title(sets):
    if not sets:
        return "all points"
    return ", ".join("%s=%s" % (k, v if isinstance(v, str) else json.dumps(v)) for k, v in sets.items())


def _combos(points):
    """Points grouped by their "sets" (first-seen order), each group sorted by P/D."""
    out = {}
    for p in points:
        out.setdefault(json.dumps(p.sets, sort_keys=True), []).append(p)
    return [(members[0].sets, sorted(members, key=lambda q: (q.pd, q.P))) for members in out.values()]


def _classes(points):
    """Utilisation keys in first-seen order, split into shown and hidden (null or 0 at every point)."""
    keys = []
    for p in points:
        keys.extend(k for k in p.utilization if k not in keys)
    shown = [k for k in keys if any((p.utilization.get(k) or 0) > 0 for p in points)]
    return shown, [k for k in keys if k not in shown]


def _pd_axis(ax, pds):
    ax.set_xscale("log")
    ticks = sorted(set(pds))
    if len(ticks) <= 12:
        ax.xaxis.set_major_locator(matplotlib.ticker.FixedLocator(ticks))
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_xticklabels([common.pretty_pd(t) for t in ticks], fontsize=7, rotation=45)
    ax.set_xlim(min(ticks) / 1.25, max(ticks) * 1.25)


def _ranges(ax, analytic, measured, measured_label):
    bounds = [v for v in analytic if v is not None and v > 0]
    label = "analytic bounds: %s" % ", ".join(common.pretty_pd(b) for b in bounds)
    for k, value in enumerate(bounds):
        ax.axvline(value, color="black", linestyle="--", linewidth=1.2, label=None if k else label)
    lo, hi = measured
    if lo is not None and hi is not None and hi >= lo > 0:
        left, right = (lo / 1.06, hi * 1.06) if lo == hi else (lo, hi)
        ax.axvspan(left, right, color="tab:green", alpha=0.15,
                   label="%s: %s to %s" % (measured_label, common.pretty_pd(lo), common.pretty_pd(hi)))
    else:
        for value in (lo, hi):
            if value is not None and value > 0:
                ax.axvline(value, color="tab:green", linewidth=1.5, label="%s bound" % measured_label)
        if lo is None and hi is None:
            ax.text(0.01, 0.02, "no measured bottleneck-free range", transform=ax.transAxes, fontsize=7,
                    color="0.4")


def _panel_measured(sweep, members, several):
    """The measured range to shade: the summary's own with one combination; with several, the span
    of each combination's bottleneck-free points (the summary's range is over all of them)."""
    if not several:
        return sweep.measured, "measured bottleneck-free range"
    free = [p.pd for p in members if p.bottleneck_free]
    span = (min(free), max(free)) if free else (None, None)
    return span, "bottleneck-free points here"


def sweep_figure(sweep, out_dir, name):
    combos = _combos(sweep.points)
    shown, hidden = _classes(sweep.points)
    cols = min(len(combos), MAX_COLUMNS)
    blocks = (len(combos) + cols - 1) // cols
    fig, axes = common.figure(2 * blocks, cols, 5.5 + 3.0 / cols, 3.2,  # + room for the legends
                              gridspec_kw={"height_ratios": [3, 2] * blocks})
    class_color = dict(zip(shown, common.colors(len(shown))))
    for i, (sets, members) in enumerate(combos):
        ax_u, ax_j = axes[2 * (i // cols), i % cols], axes[2 * (i // cols) + 1, i % cols]
        pds = [p.pd for p in members]
        peak = 0.0
        for cls in shown:
            pts = [(p.pd, p.utilization.get(cls)) for p in members if p.utilization.get(cls) is not None]
            if pts:
                ax_u.plot([q[0] for q in pts], [q[1] for q in pts], marker="o", markersize=4,
                          color=class_color[cls], label=cls)
                peak = max(peak, max(q[1] for q in pts))
        measured, measured_label = _panel_measured(sweep, members, len(combos) > 1)
        for ax in (ax_u, ax_j):
            _ranges(ax, sweep.analytic, measured, measured_label)
            _pd_axis(ax, pds)
        common.percent_axis(ax_u, top=max(1.0, peak) * 1.05)
        ax_u.set_ylabel("utilisation (% of capacity)")
        ax_u.set_title(_combo_title(sets), fontsize=9)
        _jct_panel(ax_j, members)
        if i % cols == cols - 1 or i == len(combos) - 1:  # legends once per row, on its right
            ax_u.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="resource class",
                        title_fontsize=7)
            handles, names = [], []
            for panel in axes[2 * (i // cols) + 1, : i % cols + 1]:
                for h, n in zip(*panel.get_legend_handles_labels()):
                    if n not in names and not n.startswith(("analytic", "bottleneck-free points here",
                                                            "measured")):
                        handles.append(h)
                        names.append(n)
            ax_j.legend(handles, names, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    for j in range(len(combos), blocks * cols):  # empty cells of the last block
        axes[2 * (j // cols), j % cols].set_visible(False)
        axes[2 * (j // cols) + 1, j % cols].set_visible(False)
    title = "Utilisation per resource class against P/D"
    if sweep.scenario:
        title += "\n" + sweep.scenario
    if hidden:
        title += "\n(not shown, null or 0 at every point: %s)" % ", ".join(hidden)
    fig.suptitle(title)
    return common.save(fig, out_dir, name)


def _jct_panel(ax, members):
    pts = [p for p in members if p.jct_s is not None]
    if pts:
        ax.plot([p.pd for p in pts], [p.jct_s for p in pts], color="0.6", linewidth=1, zorder=1)
        free = [p for p in pts if p.bottleneck_free]
        if free:
            ax.plot([p.pd for p in free], [p.jct_s for p in free], "o", color="tab:green",
                    label="bottleneck-free point")
        saturated = {}
        for p in pts:
            if not p.bottleneck_free:
                saturated.setdefault(p.first_saturated or p.bottleneck or "?", []).append(p)
        for (what, group), marker in zip(sorted(saturated.items()), _MARKERS * len(saturated)):
            ax.plot([p.pd for p in group], [p.jct_s for p in group], marker, markerfacecolor="none",
                    markersize=7, color="tab:red", label="saturated first: %s" % what)
        ax.set_ylim(bottom=0, top=max(p.jct_s for p in pts) * 1.15)
    else:
        ax.text(0.5, 0.5, "no JCT in the summary", transform=ax.transAxes, ha="center", color="0.4")
    ax.set_xlabel("P/D (prefill nodes / decode nodes, log scale)")
    ax.set_ylabel("JCT (s)")
    ax.grid(True, axis="y", alpha=0.3)
