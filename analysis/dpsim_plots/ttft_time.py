"""The TTFT-over-time figure from per-turn records files (records.Records): the mean and the p99 TTFT
per bin of first-token time, one colour per file, the turns per bin beneath, and the scenario events
of the run results given beside the files shaded."""

import math

from . import cdf, common, records
from .inputs import ScenarioEvent

# The TTFT axis is logarithmic when every bin's mean is > 0 and the largest p99 is more than this many
# times the smallest mean: a few slow bins then leave the others readable.
_LOG_RATIO = 20.0


def _series(bins, bin_s):
    """(xs, means, p99s) to draw: x = the middle of each bin with a turn; a NaN between two bins that
    are not next to each other, so the line breaks over the empty ones."""
    xs, means, p99s = [], [], []
    for k, b in enumerate(bins):
        if k and b.start_s - bins[k - 1].start_s > 1.5 * bin_s:
            xs.append(float("nan"))
            means.append(float("nan"))
            p99s.append(float("nan"))
        xs.append(b.start_s + bin_s / 2)
        means.append(b.mean_s)
        p99s.append(b.p99_s)
    return xs, means, p99s


def _counts(bins, bin_s):
    """(starts, turns) per bin from the first to the last with a turn, empty bins as 0, plus the end."""
    first = bins[0].start_s
    by_index = {round((b.start_s - first) / bin_s): b.turns for b in bins}
    n = max(by_index) + 1
    starts = [first + k * bin_s for k in range(n + 1)]
    turns = [by_index.get(k, 0) for k in range(n)]
    return starts, turns + turns[-1:]


def _events(curves):
    """The distinct events that acted in the paired run results, each to its run's JCT when still on,
    and their legend texts (with the runs named when not every records file's run has the event)."""
    spans = {}
    for label, _, run in curves:
        for ev in (run.events if run is not None else []):
            end = ev.end_s if ev.end_s is not None else run.jct_s
            spans.setdefault((ev.label, ev.start_s, end, ev.end_s is None), []).append(label)
    events, texts = [], []
    for (text, start, end, still_on), labels in spans.items():
        events.append(ScenarioEvent(label=text, start_s=start, end_s=end))
        text += (", from %.4g s, still on at the end (%.4g s)" if still_on else ", %.4g-%.4g s") % (start, end)
        if len(labels) < len(curves):
            text += " (run of %s)" % ", ".join(labels)
        texts.append(text)
    return events, texts


def _fmt(seconds):
    return "%.3g s" % seconds


def _draw(ax_ttft, ax_turns, curves, bin_s):
    """One mean (solid) and one p99 (dashed) line per curve, its turns per bin beneath; returns the
    smallest bin mean, the largest bin p99 and the end of the last bin drawn."""
    low, high, end = math.inf, 0.0, 0.0
    for (label, rec, _), color in zip(curves, common.colors(len(curves))):
        bins = records.ttft_bins(rec.first_token_s, rec.ttft_s, bin_s, rec.origin_s())
        xs, means, p99s = _series(bins, bin_s)
        overall = records.cdf(rec.ttft_s)
        text = "%s: %s turns, mean %s, p99 %s over all" % (
            label, "{:,}".format(rec.kept()), _fmt(math.fsum(rec.ttft_s) / rec.kept()), _fmt(overall.p99))
        del overall  # the sorted copy
        ax_ttft.plot(xs, means, color=color, linewidth=1.6, marker="o", markersize=2.5, label=text)
        ax_ttft.plot(xs, p99s, color=color, linewidth=1.1, linestyle="--", marker="o", markersize=1.5)
        starts, turns = _counts(bins, bin_s)
        ax_turns.plot(starts, turns, drawstyle="steps-post", color=color, linewidth=1.2)
        low = min(low, min(b.mean_s for b in bins))
        high = max(high, max(b.p99_s for b in bins))
        end = max(end, bins[-1].start_s + bin_s)
    return low, high, end


def ttft_over_time(data, out_dir, name="ttft-over-time.png"):
    """data: (curves, bin_s, bin_given): the curves (label, Records, Run or None), each Records with a
    turn kept; the bin width (s); whether it came from --bin (else from records.readable_bin).

    Top: TTFT (s) against simulated time, x = each bin's middle, the mean (solid) and p99 (dashed) of
    the turns whose first token came in the bin, one colour per records file; log y when it reads
    better (_LOG_RATIO). Beneath: the turns per bin. The events that acted in the run results paired
    with the files are shaded on both. Returns the path written."""
    curves, bin_s, bin_given = data
    fig, axes = common.figure(2, 1, 10.0, 3.7 + 0.1 * len(curves), sharex=True,
                              gridspec_kw={"height_ratios": [3.2, 1.3]})
    ax_ttft, ax_turns = axes[0, 0], axes[1, 0]
    events, texts = _events(curves)
    for ax in (ax_ttft, ax_turns):
        common.mark_events(ax, events, 0.0, labels=texts if ax is ax_ttft else False)
    low, high, end = _draw(ax_ttft, ax_turns, curves, bin_s)
    log = low > 0 and high > _LOG_RATIO * low
    if log:
        ax_ttft.set_yscale("log")
    else:
        ax_ttft.set_ylim(bottom=0, top=high * 1.08)
    for style, what in (("-", "mean"), ("--", "p99")):
        ax_ttft.plot([], [], color="0.3", linestyle=style, label="%s TTFT of the turns in a bin" % what)
    ax_ttft.set_ylabel("TTFT (s%s)" % (", log scale" if log else ""))
    ax_ttft.grid(True, which="major", alpha=0.3)
    handles, texts = ax_ttft.get_legend_handles_labels()  # beneath both panels: the lines keep the width
    ax_turns.legend(handles, texts, fontsize=8, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.32))
    ax_turns.set_ylim(bottom=0)
    ax_turns.set_ylabel("turns per bin")
    ax_turns.grid(True, alpha=0.3)
    ax_turns.set_xlabel("simulated time of the first token (s)")
    ax_turns.set_xlim(min(rec.origin_s() for _, rec, _ in curves), end)
    rule = "--bin" if bin_given else "the span of first-token times / 60, rounded; see --bin"
    fig.suptitle("TTFT over time: mean and p99 per %g s bin of first-token time (%s)\n%s"
                 % (bin_s, rule, cdf.turns_drawn(curves)))
    return common.save(fig, out_dir, name)
