"""Shared matplotlib helpers. Importing this module selects the non-interactive Agg backend."""

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)
import matplotlib.ticker  # noqa: E402

# Read-path policies in the order the bars show them (the paper's Basic, then DualPath, then Oracle).
POLICY_ORDER = ("pe", "de", "split", "dualpath", "oracle")
DPI = 100


def policy_sort_key(label):
    """Known read-path policies first, in POLICY_ORDER; other labels after them, alphabetically."""
    head = label.split(",")[0].strip()
    rank = POLICY_ORDER.index(head) if head in POLICY_ORDER else len(POLICY_ORDER)
    return (rank, label)


def colors(n):
    """n distinct colours from the default cycle (repeats after 10)."""
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    return [cycle[i % len(cycle)] for i in range(n)]


def save(fig, out_dir, name):
    """Writes fig as out_dir/name (PNG), closes it and returns the path written."""
    path = os.path.join(out_dir, name)
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def figure(rows, cols, width_per_col, height_per_row, **kw):
    """plt.subplots with a size derived from the grid; always returns a 2-D array of axes."""
    fig, axes = plt.subplots(rows, cols, figsize=(max(width_per_col * cols, 4.0), height_per_row * rows),
                             squeeze=False, layout="constrained", **kw)
    return fig, axes


EVENT_COLORS = ("#d62728", "#9467bd", "#8c564b", "#e377c2")


def mark_events(ax, events, end_s, labels=True):
    """Shades the scenario events that acted (inputs.ScenarioEvent, as in a run result's events[]) over
    [start_s, end_s], an event still on when the run ended up to end_s (its JCT); the k-th event in the
    k-th of EVENT_COLORS. labels: True = each event's own label in the legend, False = no legend entry,
    or a list of legend texts, one per event."""
    for k, ev in enumerate(events):
        end = ev.end_s if ev.end_s is not None else end_s
        text = ev.label if labels is True else labels[k] if labels else None
        ax.axvspan(ev.start_s, max(end, ev.start_s), color=EVENT_COLORS[k % len(EVENT_COLORS)], alpha=0.12,
                   label=text)


def percent_axis(ax, top=None):
    """Labels a utilisation axis in percent of capacity (values are fractions)."""
    ax.yaxis.set_major_formatter(matplotlib.ticker.PercentFormatter(xmax=1.0))
    ax.set_ylim(bottom=0, top=top)
    ax.grid(True, axis="y", alpha=0.3)


def pretty_pd(x):
    """P/D ratio tick label: '1/7', '7/2', '2' when a small fraction fits, else a decimal."""
    from fractions import Fraction

    frac = Fraction(x).limit_denominator(12)
    if abs(float(frac) - x) <= 1e-6 * max(1.0, x):
        return str(frac.numerator) if frac.denominator == 1 else "%d/%d" % (frac.numerator, frac.denominator)
    return "%.3g" % x


# TTFT components in the order a turn goes through them; other keys follow in file order. Keys ending
# in AFTER_FIRST_TOKEN (dpsim's alloc_after_first_token) happen after the first token: they are stacked
# on top, hatched, above the TTFT marker.
STAGE_ORDER = ("queue", "alloc", "read", "prefill")
AFTER_FIRST_TOKEN = "_after_first_token"


def _stage_key(item):
    index, key = item
    after = key.endswith(AFTER_FIRST_TOKEN)
    rank = STAGE_ORDER.index(key) if key in STAGE_ORDER else len(STAGE_ORDER)
    return (after, rank, index)


def stacked_bars(ax, xlabels, rows, totals=None, total_label=None):
    """One stacked bar per entry of rows (dicts component -> seconds), components in STAGE_ORDER.

    totals (optional, one per bar or None) are drawn as black markers labelled total_label.
    """
    keys = []
    for row in rows:
        keys.extend(k for k in row if k not in keys)
    keys = [k for _, k in sorted(enumerate(keys), key=_stage_key)]
    xs = list(range(len(rows)))
    bottom = [0.0] * len(rows)
    palette = colors(10)
    spare = iter(palette[len(STAGE_ORDER):] * len(keys))
    for key in keys:
        stage = key[: -len(AFTER_FIRST_TOKEN)] if key.endswith(AFTER_FIRST_TOKEN) else key
        color = palette[STAGE_ORDER.index(stage)] if stage in STAGE_ORDER else next(spare)
        values = [max(row.get(key, 0.0) or 0.0, 0.0) for row in rows]
        after = key.endswith(AFTER_FIRST_TOKEN)
        ax.bar(xs, values, 0.6, bottom=bottom, color=color, hatch="//" if after else None,
               alpha=0.6 if after else 1.0, label=key + (" (not in TTFT)" if after else ""))
        bottom = [b + v for b, v in zip(bottom, values)]
    if totals is not None and any(t is not None for t in totals):
        pts = [(x, t) for x, t in zip(xs, totals) if t is not None]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "k_", markersize=20, markeredgewidth=2,
                label=total_label)
    pad = max(0.0, (3 - len(rows)) / 2.0)
    ax.set_xlim(-0.6 - pad, len(rows) - 0.4 + pad)
    ax.set_xticks(xs)
    ax.set_xticklabels(xlabels, fontsize=8)
    ax.set_ylim(bottom=0, top=max(bottom + [t for t in (totals or []) if t is not None] + [1e-9]) * 1.1)
    ax.grid(True, axis="y", alpha=0.3)
    handles, names = ax.get_legend_handles_labels()
    ax.legend(handles[::-1], names[::-1], fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
