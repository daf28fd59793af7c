"""Figures from dpsim run results (inputs.Run): JCT bars, utilisation over time, TTFT breakdown."""

from . import common
from .inputs import RESOURCE_CLASSES

# A class with more links than this is drawn as the max and mean across its links per role/direction.
MAX_LINES_PER_CLASS = 8

_CLASS_TITLES = {
    "snic": "SNIC (storage NIC)",
    "cnic": "CNIC (compute NIC, one per GPU)",
    "dram": "DRAM (per node, reads + writes)",
    "pcie": "PCIe",
    "storage": "storage backend (behind each SNIC)",
    "gpu": "GPU busy time (a decode GPU is busy whenever its batch is non-empty)",
    "buffer": "DRAM KV buffer (bytes held over time, of its capacity)",
}


def labels(runs):
    """One label per run: the read-path policy, plus the scheduler and/or layerwise flag when those
    differ between the runs given together (so bars of different set-ups never share a label)."""
    vary_sched = len({r.scheduler for r in runs}) > 1
    vary_layer = len({r.layerwise for r in runs}) > 1
    out = []
    for r in runs:
        parts = [r.read_path]
        if vary_sched:
            parts.append(r.scheduler or "default scheduler")
        if vary_layer:
            parts.append("layerwise" if r.layerwise else "no layerwise")
        out.append(", ".join(parts))
    return out


def _variant_text(run, runs):
    """What tells run apart from the runs given with it, one line each: the workload's scales when they
    differ between the runs ("unscaled" at x1), the storage capacity and the DRAM tier when they do."""
    lines = []
    if len({(r.append_scale, r.gen_scale) for r in runs}) > 1:
        lines.append(run.scales().replace(", ", "\n") or "unscaled")
    if len({r.storage_capacity_bytes for r in runs}) > 1:
        lines.append(run.storage_text())
    if len({r.dram_bytes for r in runs}) > 1:  # "DRAM tier 50 GB/node" is wider than a bar
        lines.append(run.dram_text().replace("tier ", "tier\n", 1))
    return "\n".join(lines)


def jct_bars(runs, out_dir, name="jct.png"):
    """The paper's Fig. 7 layout: x = agent counts, one bar per read-path label, y = JCT (s).

    One panel per scenario set-up (name, model, P, D, the workload's append/gen scaling when it is not
    1, and the storage capacity and DRAM tier when set). Several runs with the same set-up, agents and
    label are averaged, with the min-max as an error bar. Runs stopped before every turn finished
    (complete = false) are hatched: their JCT is a lower bound.
    """
    run_labels = labels(runs)
    panels = {}
    for run, label in zip(runs, run_labels):
        panels.setdefault(run.setup(), []).append((run, label))
    all_labels = sorted(set(run_labels), key=common.policy_sort_key)
    label_color = dict(zip(all_labels, common.colors(len(all_labels))))
    fig, axes = common.figure(1, len(panels), 6.5, 4.5)
    any_incomplete = False
    for ax, (title, members) in zip(axes[0], panels.items()):
        agents = sorted({r.agents for r, _ in members})
        present = [lab for lab in all_labels if any(lab == m[1] for m in members)]
        width = 0.8 / len(present)
        for j, label in enumerate(present):
            xs, heights, errs, hatches = [], [], [[], []], []
            for g, count in enumerate(agents):
                cell = [r for r, lab in members if lab == label and r.agents == count]
                if not cell:
                    continue
                values = [r.jct_s for r in cell]
                mean = sum(values) / len(values)
                xs.append(g - 0.4 + width * (j + 0.5))
                heights.append(mean)
                errs[0].append(mean - min(values))
                errs[1].append(max(values) - mean)
                incomplete = not all(r.complete for r in cell)
                any_incomplete |= incomplete
                hatches.append("//" if incomplete else "")
            has_err = any(e > 0 for e in errs[0] + errs[1])
            bars = ax.bar(xs, heights, width * 0.95, label=label, color=label_color[label],
                          yerr=errs if has_err else None, capsize=3)
            for bar, hatch in zip(bars, hatches):
                bar.set_hatch(hatch)
            ax.bar_label(bars, fmt="%.0f", fontsize=7, padding=2)
        ax.set_xticks(range(len(agents)))
        ax.set_xticklabels([str(a) for a in agents])
        ax.set_xlabel("agents (count)")
        ax.set_ylabel("JCT (s)")
        ax.set_title(title, fontsize=10)
        ax.set_ylim(bottom=0, top=ax.get_ylim()[1] * 1.08)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(title="read path", fontsize=8, title_fontsize=8)
    suptitle = "Job completion time per read-path policy against agents"
    if any_incomplete:
        suptitle += "\n(hatched: run stopped before all turns finished; JCT is a lower bound)"
    fig.suptitle(suptitle)
    return common.save(fig, out_dir, name)


def _step(ax, series, dt, **kw):
    """Draws per-interval values as a step line over [0, n * dt]."""
    xs = [i * dt for i in range(len(series) + 1)]
    ax.plot(xs, list(series) + [series[-1]], drawstyle="steps-post", **kw)


def _groups(links):
    """Links grouped by (role, direction), in first-seen order."""
    out = {}
    for link in links:
        key = link.role + ("" if link.direction is None else " " + link.direction)
        out.setdefault(key, []).append(link)
    return out


def _draw_class(ax, cls, links, run):
    """One subplot: a line per link, or max and mean per role/direction; returns the peak drawn."""
    with_series = [link for link in links if link.series]
    peak = 0.0
    if not with_series:
        groups = _groups(links)
        for (key, members), color in zip(groups.items(), common.colors(len(groups))):
            mean = sum(m.utilization for m in members) / len(members)
            top = max(m.utilization for m in members)
            ax.hlines(mean, 0, run.jct_s, colors=color, label="%s mean over run" % key)
            if len(members) > 1:
                ax.hlines(top, 0, run.jct_s, colors=color, linestyles="--", label="%s max over run" % key)
            peak = max(peak, top)
        ax.text(0.01, 0.95, "no time series in the result: whole-run means", transform=ax.transAxes,
                fontsize=7, va="top", color="0.4")
        return peak
    if len(with_series) <= MAX_LINES_PER_CLASS:
        for link, color in zip(with_series, common.colors(len(with_series))):
            _step(ax, link.series, run.interval_s, color=color, label=link.label())
            peak = max(peak, max(link.series))
        return peak
    groups = _groups(with_series)
    for (key, members), color in zip(groups.items(), common.colors(len(groups))):
        length = max(len(m.series) for m in members)
        rows = [m.series + [0.0] * (length - len(m.series)) for m in members]
        top = [max(col) for col in zip(*rows)]
        mean = [sum(col) / len(col) for col in zip(*rows)]
        _step(ax, top, run.interval_s, color=color, linestyle="--",
              label="%s max of %d" % (key, len(members)))
        _step(ax, mean, run.interval_s, color=color, label="%s mean of %d" % (key, len(members)))
        peak = max(peak, max(top))
    return peak


def utilization_over_time(run, out_dir, name):
    """Utilisation over simulated time, one subplot per resource class present in the run.

    REQUIRES run.has_series(). Returns the path written.
    """
    classes = [c for c in RESOURCE_CLASSES if run.resources.get(c)]
    classes += sorted(c for c in run.resources if c not in RESOURCE_CLASSES and run.resources[c])
    fig, axes = common.figure(len(classes), 1, 10.0, 2.4, sharex=True)
    for k, (ax, cls) in enumerate(zip(axes[:, 0], classes)):
        common.mark_events(ax, run.events, run.jct_s, labels=k == 0)
        peak = _draw_class(ax, cls, run.resources[cls], run)
        common.percent_axis(ax, top=max(1.0, peak) * 1.05)
        ax.set_ylabel("utilisation\n(% of capacity)", fontsize=8)
        ax.set_title(_CLASS_TITLES.get(cls, cls), fontsize=9, loc="left")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
        ax.set_xlim(0, max(run.jct_s, 1e-9))
    axes[-1, 0].set_xlabel("simulated time (s)")
    fig.suptitle("Utilisation over time: %s, read path %s, %d agents\n(mean per %g s interval; JCT %.1f s)"
                 % (run.setup(), run.read_path, run.agents, run.interval_s, run.jct_s))
    return common.save(fig, out_dir, name)


def ttft_breakdown(runs, out_dir, name="ttft-breakdown.png"):
    """Stacked bars of summary.ttft_breakdown_s, one per run (sorted by set-up, workload scaling, storage
    capacity, DRAM tier, agents, APS and policy), with the mean TTFT as a marker."""
    run_labels = labels(runs)
    order = sorted(range(len(runs)), key=lambda i: (runs[i].setup(variant=False), runs[i].append_scale,
                                                    runs[i].gen_scale,
                                                    runs[i].storage_capacity_bytes or float("inf"),
                                                    runs[i].dram_bytes, runs[i].agents, runs[i].aps or 0,
                                                    common.policy_sort_key(run_labels[i])))
    runs, run_labels = [runs[i] for i in order], [run_labels[i] for i in order]
    many_setups = len({r.setup(variant=False) for r in runs}) > 1
    many_variants = len({r.variant() for r in runs}) > 1
    xlabels = []
    for run, label in zip(runs, run_labels):
        text = "%s\n%d agents" % (label.replace(", ", "\n"), run.agents)
        if run.mode == "online" and run.aps is not None:
            text += "\n%g APS" % run.aps
        if many_variants:
            text += "\n" + _variant_text(run, runs)
        if many_setups:
            text = run.name + "\n" + text
        xlabels.append(text)
    fig, axes = common.figure(1, 1, 4.0 + 1.1 * len(runs), 4.5)
    ax = axes[0, 0]
    common.stacked_bars(ax, xlabels, [r.ttft_breakdown_s for r in runs],
                        totals=[r.ttft_s.get("mean") for r in runs], total_label="TTFT mean")
    ax.set_ylabel("mean time per turn (s)")
    ax.set_xlabel("run (read path, agents)")
    title = "TTFT breakdown (summary.ttft_breakdown_s)"
    if not many_setups:
        title += ": " + runs[0].setup(variant=not many_variants)
    ax.set_title(title)
    return common.save(fig, out_dir, name)
