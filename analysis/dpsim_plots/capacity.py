"""Online figures: latency against APS (from a capacity result, or from several online run results)
and the TTFT breakdown per APS point of a capacity result."""

from . import common
from .runs import labels

_PERCENTILES = (("p50", "-", "o"), ("p99", "--", "s"))


def _latency_panels(ax_ttft, ax_tpot, curves, slo_ttft=None, slo_tpot=None, capacity_aps=None):
    """curves: list of (label, [aps], [ttft dict], [tpot dict], [meets_slo or None]).

    Draws p50 and p99 per curve; SLOs as horizontal lines; the capacity as a vertical line; points
    that miss the SLO (meets_slo = false) get a red ring.
    """
    for (label, aps, ttfts, tpots, meets), color in zip(curves, common.colors(len(curves))):
        for ax, stats in ((ax_ttft, ttfts), (ax_tpot, tpots)):
            for pct, style, marker in _PERCENTILES:
                pts = [(a, s[pct]) for a, s in zip(aps, stats) if s.get(pct) is not None]
                if not pts:
                    continue
                name = pct if not label else "%s %s" % (label, pct)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], linestyle=style, marker=marker,
                        color=color, label=name)
            missed = [(a, s.get("p99")) for a, s, m in zip(aps, stats, meets) if m is False]
            missed = [m for m in missed if m[1] is not None]
            if missed:
                ax.scatter([m[0] for m in missed], [m[1] for m in missed], s=140, facecolors="none",
                           edgecolors="red", linewidths=1.5, label="misses the SLO")
    for ax, slo, what in ((ax_ttft, slo_ttft, "TTFT"), (ax_tpot, slo_tpot, "TPOT")):
        if slo is not None:
            ax.axhline(slo, color="black", linestyle=":", label="%s SLO = %g s" % (what, slo))
        if capacity_aps is not None:
            ax.axvline(capacity_aps, color="tab:red", linestyle="-.", alpha=0.7,
                       label="capacity = %g APS" % capacity_aps)
        ax.set_xlabel("agent arrival rate (agents/s, APS)")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        handles, names = ax.get_legend_handles_labels()
        unique = dict(zip(names, handles))  # one "misses the SLO" entry per panel
        ax.legend(unique.values(), unique.keys(), fontsize=7)
    ax_ttft.set_ylabel("TTFT (s)")
    ax_ttft.set_title("time to first token")
    ax_tpot.set_ylabel("TPOT (s)")
    ax_tpot.set_title("time per output token")


def latency_vs_aps(cap, out_dir, name):
    """TTFT and TPOT p50/p99 against APS with the SLO lines, from a capacity result."""
    fig, axes = common.figure(1, 2, 5.5, 4.2)
    curve = ("", [p.aps for p in cap.points], [p.ttft_s for p in cap.points], [p.tpot_s for p in cap.points],
             [p.meets_slo for p in cap.points])
    _latency_panels(axes[0, 0], axes[0, 1], [curve], cap.slo_ttft_s, cap.slo_tpot_s, cap.capacity_aps)
    title = "Latency against arrival rate"
    if cap.scenario:
        title += "\n" + cap.scenario
    fig.suptitle(title)
    return common.save(fig, out_dir, name)


def latency_vs_aps_runs(runs, out_dir, name="latency.png"):
    """TTFT and TPOT p50/p99 against workload.aps from online run results, one curve per label
    (runs.labels). No SLO lines: run results carry none."""
    by_label = {}
    for run, label in zip(runs, labels(runs)):
        by_label.setdefault(label, []).append(run)
    curves = []
    for label in sorted(by_label, key=common.policy_sort_key):
        members = sorted(by_label[label], key=lambda r: r.aps)
        curves.append((label, [r.aps for r in members], [r.ttft_s for r in members],
                       [r.tpot_s for r in members], [None] * len(members)))
    fig, axes = common.figure(1, 2, 5.5, 4.2)
    _latency_panels(axes[0, 0], axes[0, 1], curves)
    fig.suptitle("Latency against arrival rate (online runs)")
    return common.save(fig, out_dir, name)


def ttft_breakdown(cap, out_dir, name):
    """Stacked TTFT components per APS point of a capacity result, the mean TTFT as a marker.
    REQUIRES some point with a ttft_breakdown_s (points without one are left out)."""
    points = [p for p in cap.points if p.ttft_breakdown_s]
    fig, axes = common.figure(1, 1, 4.0 + 0.9 * len(points), 4.5)
    ax = axes[0, 0]
    xlabels = ["%g" % p.aps + ("" if p.meets_slo is not False else "\n(misses SLO)") for p in points]
    common.stacked_bars(ax, xlabels, [p.ttft_breakdown_s for p in points],
                        totals=[p.ttft_s.get("mean") for p in points], total_label="TTFT mean")
    ax.set_xlabel("agent arrival rate (agents/s, APS)")
    ax.set_ylabel("mean time per turn (s)")
    title = "TTFT breakdown per arrival rate"
    if cap.scenario:
        title += "\n" + cap.scenario
    ax.set_title(title)
    return common.save(fig, out_dir, name)
