"""The latency CDF figure from per-turn records files (records.Records): TTFT and TPOT, one curve per
file, p50 and p99 marked, and the SLOs of the run results given beside them as vertical lines."""

import os

from . import common, records

# An SLO further right than this factor times the largest value drawn is left off the axis (named in
# the legend): on the linear TPOT axis a 50 ms SLO would squash 1-2 ms curves against the left edge.
_SLO_REACH = {"log": 100.0, "linear": 1.5}
_PERCENTILES = (("p50", 0.50, "o"), ("p99", 0.99, "s"))
# A linear axis stops at this factor times the largest p99 when the largest value lies beyond it (the
# maximum is in the legend): a few slow turns would otherwise squash every curve to the left.
_LINEAR_CUT = 2.0


def _fmt(value, unit):
    return "%.3g %s" % (value, unit)


def _panel(ax, curves, column, scale, unit):
    """Draws one CDF per curve (label, Records, Run or None) of column ("ttft_s" or "tpot_s") in
    unit (values times scale); returns the largest value and the largest p99 drawn (0 when none)."""
    top = top_p99 = 0.0
    for (label, rec, _), color in zip(curves, common.colors(len(curves))):
        dist = records.cdf(getattr(rec, column))
        if dist is None:
            ax.plot([], [], color=color, label="%s: no turn with a second token" % label)
            continue
        xs, ys = records.cdf_points(dist.values)
        xs = [x * scale for x in xs]
        ax.plot([xs[0]] + xs, [0.0] + ys, drawstyle="steps-post", color=color, linewidth=1.5,
                label="%s: p50 %s, p99 %s, max %s (%d turns)"
                % (label, _fmt(dist.p50 * scale, unit), _fmt(dist.p99 * scale, unit), _fmt(xs[-1], unit),
                   len(dist)))
        for pct, y, marker in _PERCENTILES:
            ax.plot([getattr(dist, pct) * scale], [y], marker, color=color, markersize=6)
        top, top_p99 = max(top, xs[-1]), max(top_p99, dist.p99 * scale)
        del dist  # the sorted copy: one column of one file at a time
    return top, top_p99


def _slo_lines(ax, curves, key, what, scale, unit, top, log):
    """Vertical lines at the SLOs (Run.slo_ttft_s / slo_tpot_s) of the run results paired with the
    curves, one per distinct value; an SLO far right of the data is left off the axis and said so."""
    slos = {}
    for _, _, run in curves:
        value = getattr(run, key) if run is not None else None
        if value is not None:
            slos.setdefault(value, []).append(os.path.basename(run.path))
    if not slos:
        return
    left, right = ax.get_xlim()
    reach = _SLO_REACH["log" if log else "linear"] * top
    for value, paths in sorted(slos.items()):
        x = value * scale
        label = "%s SLO = %s (summary.slo of %s)" % (what, _fmt(x, unit), ", ".join(paths))
        if top > 0 and x > reach:
            label += ", off the axis"
        ax.axvline(x, color="black", linestyle=":", linewidth=1.2, label=label)
        if not (top > 0 and x > reach):
            right = max(right, x * (1.3 if log else 1.05))
    ax.set_xlim(left, right)


def turns_drawn(curves):
    """Which turns are drawn: all, or those after --after; with the SLO warm-up of the paired run
    results (summary.slo.warmup_end_s) when they have one."""
    after = curves[0][1].after
    warmups = sorted({run.warmup_end_s for _, _, run in curves
                      if run is not None and run.warmup_end_s is not None})
    if after is None:
        text = "all turns"
        if warmups:
            text += "; the SLO judges only those after summary.slo.warmup_end_s = %s s (see --after)" % (
                ", ".join("%g" % w for w in warmups))
        return text
    text = "turns whose first token came after %g s (--after)" % after
    if warmups == [after]:
        text += ", the SLO warm-up (summary.slo.warmup_end_s)"
    return text


def latency_cdf(curves, out_dir, name="latency-cdf.png"):
    """curves: list of (label, Records, Run or None), each Records with at least one turn kept.

    Left: the CDF of TTFT (s, log x when every TTFT is > 0); right: the CDF of TPOT (ms; one-token
    turns have none; the axis stops at _LINEAR_CUT times the largest p99 when the maximum lies
    beyond). p50 (circle) and p99 (square) are marked on each curve; they and the maximum are given in
    its legend entry. Returns the path written.
    """
    fig, axes = common.figure(1, 2, 6.5, 5.2 + 0.15 * len(curves))
    ax_ttft, ax_tpot = axes[0, 0], axes[0, 1]
    panels = ((ax_ttft, "ttft_s", "slo_ttft_s", "TTFT", 1.0, "s"),
              (ax_tpot, "tpot_s", "slo_tpot_s", "TPOT", 1e3, "ms"))
    for ax, column, slo_key, what, scale, unit in panels:
        log = column == "ttft_s" and all(min(rec.ttft_s) > 0 for _, rec, _ in curves)
        if log:
            ax.set_xscale("log")
        top, top_p99 = _panel(ax, curves, column, scale, unit)
        cut = not log and top > _LINEAR_CUT * top_p99 > 0
        if cut:
            ax.set_xlim(ax.get_xlim()[0], _LINEAR_CUT * top_p99)
            top = _LINEAR_CUT * top_p99
        _slo_lines(ax, curves, slo_key, what, scale, unit, top, log)
        for _, y, _ in _PERCENTILES:
            ax.axhline(y, color="0.6", linestyle=":", linewidth=0.8)
        for pct, _, marker in _PERCENTILES:
            ax.plot([], [], marker, color="0.3", linestyle="none", label="%s (marker)" % pct)
        ax.set_ylim(0, 1.02)
        ax.set_ylabel("fraction of turns (CDF)")
        ax.set_xlabel("%s per turn (%s%s)" % (what, unit, ", log scale" if log else
                                               ", cut at %gx the largest p99" % _LINEAR_CUT if cut else ""))
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(0.0, -0.14))  # below: curves fill the panel
    ax_ttft.set_title("time to first token")
    ax_tpot.set_title("time per output token (turns of more than one token)")
    fig.suptitle("Latency per turn: CDF over each records file (dpsim outputs.requests)\n"
                 + turns_drawn(curves))
    return common.save(fig, out_dir, name)
