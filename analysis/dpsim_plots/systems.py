"""The systems a line figure compares, named as the project names them (scaling.png, storage-capacity.png,
dram-tier.png):
  Basic     read_path "pe" with layerwise false
  DualPath  read_path "dualpath"
  Oracle    read_path "oracle"
  others    "<read_path>, layerwise" or "<read_path>, no layerwise"
A system whose runs given together use more than one scheduler (or layerwise flag) gets it in its label,
so different set-ups never share a line.

Standard library only (plot.py plans its figures before it imports matplotlib); legend() draws.
"""

BASIC, DUALPATH, ORACLE = "Basic", "DualPath", "Oracle"
SYSTEM_ORDER = (BASIC, DUALPATH, ORACLE)
_MARKERS = {BASIC: "s", DUALPATH: "o", ORACLE: "^"}


def _flag(layerwise):
    return {True: "layerwise", False: "no layerwise"}.get(layerwise, "layerwise not given")


def system(run):
    """The system a run is: Basic, DualPath, Oracle, or "<read_path>, <layerwise flag>"."""
    if run.read_path == "pe" and run.layerwise is False:
        return BASIC
    if run.read_path == "dualpath":
        return DUALPATH
    if run.read_path == "oracle":
        return ORACLE
    return "%s, %s" % (run.read_path, _flag(run.layerwise))


def labels(runs):
    """system() per run, plus its scheduler or layerwise flag when that system's runs differ in it."""
    names = [system(r) for r in runs]
    out = []
    for run, name in zip(runs, names):
        same = [r for r, n in zip(runs, names) if n == name]
        parts = [name]
        if len({r.scheduler for r in same}) > 1:
            parts.append("scheduler %s" % (run.scheduler or "default"))
        if len({r.layerwise for r in same}) > 1:
            parts.append(_flag(run.layerwise))
        out.append(", ".join(parts))
    return out


def sort_key(label):
    """Basic, DualPath, Oracle first (with their variants), then the other labels alphabetically."""
    head = label.split(",")[0]
    return (SYSTEM_ORDER.index(head) if head in SYSTEM_ORDER else len(SYSTEM_ORDER), label)


def marker(label):
    """The matplotlib marker of a label's system (a diamond for the others)."""
    return _MARKERS.get(label.split(",")[0], "D")


def legend(ax, labels_drawn, colors, hollow, extra=()):
    """A legend of the systems (colour and marker) to the right of ax; with hollow, an entry saying what
    a hollow point means; extra: more matplotlib handles after them."""
    import matplotlib.lines

    handles = [matplotlib.lines.Line2D([], [], color=colors[lab], marker=marker(lab), markersize=7,
                                       label=lab) for lab in labels_drawn]
    if hollow:
        handles.append(matplotlib.lines.Line2D([], [], color="0.3", marker="o", markerfacecolor="white",
                                               linestyle="none", label="hollow: run stopped early\n"
                                                                       "(its JCT a lower bound)"))
    ax.legend(handles=handles + list(extra), title="system", fontsize=8, title_fontsize=8, loc="upper left",
              bbox_to_anchor=(1.02, 1.0))
