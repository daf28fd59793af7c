"""Reading and checking dpsim's JSON outputs. Standard library only (no matplotlib).
(The per-turn records files, .csv / .jsonl, are read by records.py.)

load(path) reads one file, detects its kind and returns a Run, a Sweep, a Capacity or a Plan holding
only the fields the figures use, already checked. Any problem raises InputError whose message names the file,
the JSON path and what was expected, e.g.
    out/r.json: summary.jct_s: expected a number >= 0, got "fast"
Keys the figures do not use are ignored, so newer outputs with extra keys still plot.

Kinds:
  run result       no "kind" key; has "summary" and "resources" (dpsim run)
  sweep summary    "kind": "sweep"     (dpsim sweep: summary.json)
  capacity result  "kind": "capacity"  (online capacity search: one point per APS tried)
  plan             "kind": "plan"      (dpsim plan: DIR/plan.json, one point per cluster run)
"""

import json
import math
import os
from dataclasses import dataclass, field

# Resource classes of a run result, in the order the figures show them.
# The simulator's list is sim/platform/resource_class.h (tests/analysis: case resource_names).
RESOURCE_CLASSES = ("snic", "cnic", "dram", "pcie", "storage", "gpu", "buffer")


class InputError(Exception):
    """A file that is not a readable dpsim output; str(e) is the whole message."""



def _short_path(path):
    """A scenario path for titles: relative to the working directory when it lies below it."""
    if not os.path.isabs(path):
        return path
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel

def short_number(value):
    """value to 3 significant digits, without an exponent below 1e6: 0.277, 2.77, 1000."""
    return "%g" % float("%.3g" % value)


@dataclass
class Link:
    role: str  # "prefill" | "decode"
    node: int
    gpu: object  # int or None
    direction: object  # "in", "out", "read", "write", "shared" or None (GPUs)
    utilization: float  # mean over the run, fraction of capacity
    series: list  # utilisation per series interval (may be empty)

    def label(self):
        parts = [self.role, "n%d" % self.node]
        if self.gpu is not None:
            parts.append("g%d" % self.gpu)
        if self.direction is not None:
            parts.append(str(self.direction))
        return " ".join(parts)


@dataclass
class Run:
    path: str
    name: str
    model: str
    prefill_nodes: int
    decode_nodes: int
    agents: int
    read_path: str
    scheduler: str
    layerwise: object  # bool or None when absent
    mode: str  # "offline" | "online"
    aps: object  # agents/s (float) or None
    interval_s: float  # series interval; 0 = no series
    jct_s: float
    complete: bool
    ttft_s: dict  # percentile -> s
    tpot_s: dict
    ttft_breakdown_s: dict  # component -> mean s, file order
    resources: dict = field(default_factory=dict)  # class -> [Link]
    slo_ttft_s: object = None  # summary.slo.ttft_s (float), None when absent
    slo_tpot_s: object = None
    warmup_end_s: object = None  # summary.slo.warmup_end_s (float), None when absent or null
    append_scale: float = 1.0  # scenario.workload.append_scale (1 when absent: results older than it)
    gen_scale: float = 1.0  # scenario.workload.gen_scale
    storage_capacity_bytes: float = 0.0  # scenario.storage.capacity_bytes; 0 = unlimited (and when absent)
    dram_bytes: float = 0.0  # scenario.cache.dram_bytes, per node; 0 = no DRAM tier (and when absent)
    storage: object = None  # StorageStats (summary.storage); None in results older than scenario.storage
    dram_tier: object = None  # DramTierStats (summary.dram_tier); None without a tier
    storage_read_bytes: object = None  # summary.storage_read_bytes (float); None when absent
    events: list = field(default_factory=list)  # [ScenarioEvent] that acted (results' events[])

    def scales(self):
        """The workload's scaling as text, e.g. "append x1.5", "append x2, gen x3"; "" when both are 1."""
        parts = [("%s x%g" % (what, value)) for what, value in (("append", self.append_scale),
                                                               ("gen", self.gen_scale)) if value != 1]
        return ", ".join(parts)

    def storage_text(self):
        """The storage tier's size: "storage 0.277 TB" or "storage unlimited"."""
        if not self.storage_capacity_bytes:
            return "storage unlimited"
        return "storage %s TB" % short_number(self.storage_capacity_bytes / 1e12)

    def dram_text(self):
        """The DRAM tier's size: "DRAM tier 50 GB/node" or "no DRAM tier"."""
        if not self.dram_bytes:
            return "no DRAM tier"
        return "DRAM tier %s GB/node" % short_number(self.dram_bytes / 1e9)

    def tiers(self):
        """The KV tiers' sizes as text when set, e.g. "storage 0.277 TB, DRAM tier 50 GB/node"; "" when
        storage is unlimited and there is no DRAM tier."""
        parts = [self.storage_text()] if self.storage_capacity_bytes else []
        return ", ".join(parts + ([self.dram_text()] if self.dram_bytes else []))

    def variant(self):
        """scales() and tiers() together: what sets this run apart from the scenario's defaults."""
        return ", ".join(t for t in (self.scales(), self.tiers()) if t)

    def setup(self, variant=True):
        """Short description of the run's set-up, e.g. 'ds27b-32k (ds27b, 1P1D)', with the workload's
        scaling when it is not 1 and the KV tiers when set, if variant is true: 'ds660b-64k (ds660b, 2P4D,
        append x1.5)', 'ds660b-64k (ds660b, 2P4D, storage 0.277 TB)'."""
        model = ("%s, " % self.model) if self.model and self.model != self.name else ""
        scaled = (", " + self.variant()) if variant and self.variant() else ""
        return "%s (%s%dP%dD%s)" % (self.name, model, self.prefill_nodes, self.decode_nodes, scaled)

    def has_series(self):
        """True when some link has a utilisation time series (timeseries_interval_s > 0)."""
        return self.interval_s > 0 and any(link.series for links in self.resources.values() for link in links)


@dataclass
class ScenarioEvent:
    """One entry of the results' events[] that acted: a scenario event (scenarios/README.md, "events")."""
    label: str  # e.g. "link_degrade n2 snic in, n2 snic out x0.25"
    start_s: float  # applied_at_s
    end_s: object  # restored_at_s (float), None when still on at the run's end


@dataclass
class StorageStats:
    """summary.storage: the KV tier in storage (storage.capacity_bytes)."""
    hit_rate: float  # context tokens found stored / asked for, in [0, 1]
    recomputed_tokens: float  # context tokens storage had given up, computed again
    evicted_bytes: float
    stored_bytes_peak: float  # unlimited: the agents' working set


@dataclass
class DramTierStats:
    """summary.dram_tier: the KV tier in each node's DRAM (cache.dram_bytes > 0)."""
    hit_rate: float  # hit tokens taken from a DRAM tier / hit tokens, in [0, 1]
    snic_bytes_saved: float


@dataclass
class SweepPoint:
    name: str
    P: int
    D: int
    pd: float
    sets: dict
    jct_s: object  # float or None
    utilization: dict  # resource class -> fraction or None
    bottleneck: object
    bottleneck_free: object  # bool or None
    first_saturated: object


@dataclass
class Sweep:
    path: str
    scenario: str
    analytic: tuple  # (pd_min, pd_max), each float or None
    measured: tuple
    points: list


@dataclass
class CapacityPoint:
    aps: float
    meets_slo: object  # bool or None
    ttft_s: dict
    tpot_s: dict
    ttft_breakdown_s: dict


@dataclass
class Capacity:
    path: str
    scenario: str
    slo_ttft_s: object  # float or None
    slo_tpot_s: object
    capacity_aps: object
    points: list


@dataclass
class PlanPoint:
    name: str
    p: int
    d: int
    sets: dict  # choice key -> value (empty without --set-list), keys sorted
    gpus: int
    cost_per_hour: object  # float or None (no price)
    ok: bool  # meets the goal
    ttft_judged_s: object  # float or None (nothing judged, or no run)
    jct_s: object  # float or None (no run)
    x: float  # the size: gpus, or cost_per_hour when the objective is "cost"
    y: object  # the front's y: ttft_judged_s (goal "slo") or jct_s (the JCT goals); None when unknown

    def label(self):
        return "%dP%dD" % (self.p, self.d)


@dataclass
class Plan:
    path: str
    scenario: str  # the scenario file's base name
    mode: str  # "online" | "offline" ("" when dpsim could not reload the scenario)
    goal: str  # "slo" | "jct_target" | "min_jct_x_size"
    objective: str  # "gpus" | "cost"
    size_unit: str  # "GPUs" | "money per hour"
    sets: list  # the --set overrides of every run
    slo_ttft_s: object  # float or None
    slo_tpot_s: object
    slo_statistic: str
    jct_target_s: object  # float or None (set only for goal "jct_target")
    recommended: object  # a PlanPoint or None
    objective_value: object  # the recommended point's objective (size, or JCT x size), float or None
    front: list  # names of the points on the Pareto front (pareto_front)
    runs: int
    runs_this_invocation: object  # int or None
    wall_s: object  # float or None
    points: list  # PlanPoint, in the order the search probed them


PLAN_GOALS = ("slo", "jct_target", "min_jct_x_size")
PLAN_OBJECTIVES = ("gpus", "cost")

_EXPECTED_KINDS = ('a dpsim run result (an object with "summary" and "resources"), a sweep summary '
                   '("kind": "sweep"), a capacity result ("kind": "capacity") or a plan ("kind": "plan")')


def _show(value):
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _join(prefix, key):
    if isinstance(key, int):
        return "%s[%d]" % (prefix, key)
    return "%s.%s" % (prefix, key) if prefix else key


class _Doc:
    """Typed access to one parsed file; every failure names the file and the JSON path."""

    def __init__(self, path):
        self.path = path

    def fail(self, where, expected, got):
        raise InputError("%s: %s: expected %s, got %s" % (self.path, where, expected, got))

    def get(self, obj, prefix, key, kind, default=KeyError, **kw):
        where = _join(prefix, key)
        if key not in obj:
            if default is not KeyError:
                return default
            self.fail(where, _describe(kind, **kw), "nothing (key missing)")
        return self.check(obj[key], where, kind, **kw)

    def check(self, value, where, kind, minimum=None, positive=False, nullable=False):
        if value is None and nullable:
            return None
        expected = _describe(kind, minimum=minimum, positive=positive, nullable=nullable)
        is_num = isinstance(value, (int, float)) and not isinstance(value, bool)
        ok = {
            "object": isinstance(value, dict),
            "array": isinstance(value, list),
            "string": isinstance(value, str),
            "bool": isinstance(value, bool),
            "number": is_num and math.isfinite(value),
            "integer": is_num and math.isfinite(value) and float(value).is_integer(),
        }[kind]
        if ok and ((minimum is not None and value < minimum) or (positive and value <= 0)):
            ok = False
        if not ok:
            self.fail(where, expected, _show(value))
        return int(value) if kind == "integer" else value

    def numbers(self, obj, prefix, key, nullable=False):
        """An object of name -> number (file order kept)."""
        table = self.get(obj, prefix, key, "object")
        where = _join(prefix, key)
        return {k: self.check(v, _join(where, k), "number", nullable=nullable) for k, v in table.items()}


def _describe(kind, minimum=None, positive=False, nullable=False):
    text = {"object": "an object", "array": "an array", "string": "a string", "bool": "true or false",
            "number": "a number", "integer": "an integer"}[kind]
    if minimum is not None:
        text += " >= %g" % minimum
    if positive:
        text += " > 0"
    return text + (" or null" if nullable else "")


def load(path):
    """Reads one file and returns a Run, a Sweep, a Capacity or a Plan. Raises InputError."""
    try:
        with open(path, encoding="utf-8") as f:
            root = json.load(f)
    except OSError as e:
        raise InputError("%s: cannot open: %s" % (path, e.strerror or e)) from None
    except UnicodeDecodeError:
        raise InputError("%s: not a JSON file (not UTF-8 text); expected %s"
                         % (path, _EXPECTED_KINDS)) from None
    except ValueError as e:
        raise InputError("%s: not valid JSON (%s); expected %s" % (path, e, _EXPECTED_KINDS)) from None
    if not isinstance(root, dict):
        raise InputError("%s: top level: expected %s, got %s" % (path, _EXPECTED_KINDS, _show(root)))
    doc = _Doc(path)
    if "kind" in root:
        kind = root["kind"]
        if kind == "sweep":
            return _sweep(doc, root)
        if kind == "capacity":
            return _capacity(doc, root)
        if kind == "plan":
            return _plan(doc, root)
        doc.fail("kind", '"sweep", "capacity" or "plan" (run results have no "kind")', _show(kind))
    if "summary" in root and "resources" in root:
        return _run(doc, root)
    keys = ", ".join(sorted(root)[:8]) or "none"
    raise InputError("%s: expected %s; its top-level keys are: %s" % (path, _EXPECTED_KINDS, keys))


def _role_change(doc, entry, at):
    """A role_change entry of events[]: one span per node whose drain began, from drain_from_s to
    switched_at_s (None: still draining at the run's end)."""
    out = []
    to = doc.get(entry, at, "to", "string")
    for k, node in enumerate(doc.get(entry, at, "nodes", "array")):
        nat = _join(_join(at, "nodes"), k)
        doc.check(node, nat, "object")
        start = doc.get(node, nat, "drain_from_s", "number", nullable=True, minimum=0)
        if start is None:
            continue
        label = "role_change n%d %s -> %s (drain)" % (doc.get(node, nat, "node", "number", minimum=0),
                                                     doc.get(node, nat, "from", "string"), to)
        out.append(ScenarioEvent(label=label, start_s=start,
                                 end_s=doc.get(node, nat, "switched_at_s", "number", nullable=True, minimum=0)))
    return out


def _node_downs(doc, entries):
    """node_down entries of events[] that acted: one span per node, from the failure to the first node_up
    of that node after it (None: still down at the run's end). entries: (index, entry) of node events."""
    ups, downs = [], []
    for i, entry in entries:
        at = _join("events", i)
        acted = doc.get(entry, at, "acted_at_s", "number", nullable=True, minimum=0)
        nodes = [doc.check(n, _join(_join(at, "nodes"), k), "integer")
                 for k, n in enumerate(doc.get(entry, at, "nodes", "array"))]
        if acted is None:
            continue
        (downs if doc.get(entry, at, "kind", "string") == "node_down" else ups).append((acted, nodes))
    out = []
    for acted, nodes in downs:
        for n in nodes:
            back = [t for t, up_nodes in ups if n in up_nodes and t >= acted]
            out.append(ScenarioEvent(label="node_down n%d" % n, start_s=acted, end_s=min(back) if back else None))
    return out


def _autoscale(doc, root):
    """summary.autoscale's conversions (control.autoscale), each a drain span like a role_change's."""
    summary = doc.get(root, "", "summary", "object")
    scale = doc.get(summary, "summary", "autoscale", "object", nullable=True, default=None)
    if scale is None:
        return []
    out = []
    for i, act in enumerate(doc.get(scale, "summary.autoscale", "actions", "array")):
        at = _join("summary.autoscale.actions", i)
        doc.check(act, at, "object")
        label = "autoscale n%d %s -> %s (drain)" % (doc.get(act, at, "node", "number", minimum=0),
                                                   doc.get(act, at, "from", "string"), doc.get(act, at, "to", "string"))
        out.append(ScenarioEvent(label=label, start_s=doc.get(act, at, "drain_from_s", "number", minimum=0),
                                 end_s=doc.get(act, at, "switched_at_s", "number", nullable=True, minimum=0)))
    return out


def _events(doc, root):
    """The results' events[] that acted (applied_at_s not null; a role change: each node's drain), in file
    order, then each node's time down (node_down to node_up)."""
    out, nodes = [], []
    for i, entry in enumerate(doc.get(root, "", "events", "array", default=[])):
        at = _join("events", i)
        doc.check(entry, at, "object")
        kind = doc.get(entry, at, "kind", "string")
        if kind == "role_change":
            out.extend(_role_change(doc, entry, at))
            continue
        if kind in ("node_down", "node_up"):
            nodes.append((i, entry))
            continue
        start = doc.get(entry, at, "applied_at_s", "number", nullable=True, minimum=0)
        if start is None:
            continue
        links = doc.get(entry, at, "links", "array")
        names = [doc.check(name, _join(_join(at, "links"), k), "string") for k, name in enumerate(links)]
        label = "%s %s x%g" % (doc.get(entry, at, "kind", "string"), ", ".join(names),
                               doc.get(entry, at, "factor", "number", positive=True))
        out.append(ScenarioEvent(label=label, start_s=start,
                                 end_s=doc.get(entry, at, "restored_at_s", "number", nullable=True,
                                               minimum=0)))
    return out + _node_downs(doc, nodes)


def _run(doc, root):
    summary = doc.get(root, "", "summary", "object")
    scenario = doc.get(root, "", "scenario", "object")
    cluster = doc.get(scenario, "scenario", "cluster", "object")
    workload = doc.get(scenario, "scenario", "workload", "object")
    policy = doc.get(scenario, "scenario", "policy", "object")
    outputs = doc.get(scenario, "scenario", "outputs", "object", default={})
    mode = doc.get(workload, "scenario.workload", "mode", "string", default="offline")
    aps = doc.get(workload, "scenario.workload", "aps", "number", default=None, positive=True)
    run = Run(
        path=doc.path,
        name=doc.get(scenario, "scenario", "name", "string", default=os.path.basename(doc.path)),
        model=doc.get(scenario, "scenario", "model", "string", default=""),
        prefill_nodes=doc.get(cluster, "scenario.cluster", "prefill_nodes", "integer", minimum=1),
        decode_nodes=doc.get(cluster, "scenario.cluster", "decode_nodes", "integer", minimum=1),
        agents=doc.get(workload, "scenario.workload", "agents", "integer", minimum=1),
        read_path=doc.get(policy, "scenario.policy", "read_path", "string"),
        scheduler=doc.get(policy, "scenario.policy", "scheduler", "string", default=""),
        layerwise=doc.get(policy, "scenario.policy", "layerwise", "bool", default=None),
        mode=mode,
        aps=aps if mode == "online" else None,
        # The interval the series are at (summary.series_interval_s: the scenario's, doubled for a long
        # run); older results give only the scenario's.
        interval_s=doc.get(summary, "summary", "series_interval_s", "number", minimum=0,
                           default=doc.get(outputs, "scenario.outputs", "timeseries_interval_s", "number",
                                           default=0.0, minimum=0)),
        jct_s=doc.get(summary, "summary", "jct_s", "number", minimum=0),
        complete=doc.get(root, "", "complete", "bool", default=True),
        ttft_s=doc.numbers(summary, "summary", "ttft_s"),
        tpot_s=doc.numbers(summary, "summary", "tpot_s"),
        ttft_breakdown_s=doc.numbers(summary, "summary", "ttft_breakdown_s"),
        append_scale=doc.get(workload, "scenario.workload", "append_scale", "number", default=1.0,
                             positive=True),
        gen_scale=doc.get(workload, "scenario.workload", "gen_scale", "number", default=1.0, positive=True),
    )
    slo = doc.get(summary, "summary", "slo", "object", default={})  # online runs: the SLO and its warm-up

    def optional(key, **kw):
        return doc.get(slo, "summary.slo", key, "number", default=None, nullable=True, **kw)

    run.slo_ttft_s, run.slo_tpot_s = optional("ttft_s", positive=True), optional("tpot_s", positive=True)
    run.warmup_end_s = optional("warmup_end_s", minimum=0)
    _tiers(doc, scenario, summary, run)
    run.events = _events(doc, root) + _autoscale(doc, root)
    resources = doc.get(root, "", "resources", "object")
    for cls, entries in resources.items():
        where = _join("resources", cls)
        doc.check(entries, where, "array")
        links = []
        for i, entry in enumerate(entries):
            at = _join(where, i)
            doc.check(entry, at, "object")
            series = doc.get(entry, at, "series", "array", default=[])
            links.append(Link(
                role=doc.get(entry, at, "role", "string"),
                node=doc.get(entry, at, "node", "integer", minimum=0),
                gpu=doc.get(entry, at, "gpu", "integer", default=None, minimum=0),
                direction=doc.get(entry, at, "direction", "string", default=None),
                utilization=doc.get(entry, at, "utilization", "number", minimum=0),
                series=[doc.check(v, _join(_join(at, "series"), k), "number") for k, v in enumerate(series)],
            ))
        run.resources[cls] = links
    return run


def _fraction(doc, obj, prefix, key):
    """obj[key], a number in [0, 1] (a hit rate)."""
    if key not in obj:
        doc.fail(_join(prefix, key), "a number in [0, 1]", "nothing (key missing)")
    value = obj[key]
    is_num = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not (is_num and 0 <= value <= 1):
        doc.fail(_join(prefix, key), "a number in [0, 1]", _show(value))
    return value


def _tiers(doc, scenario, summary, run):
    """The KV tiers of a run: their sizes from the scenario and their statistics from the summary. A
    result with scenario.storage must have summary.storage; one with scenario.cache must have
    summary.storage_read_bytes, and summary.dram_tier when cache.dram_bytes > 0. Results older than
    either key have neither tier (sizes 0, statistics None)."""
    if "storage" in scenario:
        storage = doc.get(scenario, "scenario", "storage", "object")
        run.storage_capacity_bytes = doc.get(storage, "scenario.storage", "capacity_bytes", "number",
                                             minimum=0)
        stats = doc.get(summary, "summary", "storage", "object")
        run.storage = StorageStats(
            hit_rate=_fraction(doc, stats, "summary.storage", "hit_rate"),
            recomputed_tokens=doc.get(stats, "summary.storage", "recomputed_tokens", "number", minimum=0),
            evicted_bytes=doc.get(stats, "summary.storage", "evicted_bytes", "number", minimum=0),
            stored_bytes_peak=doc.get(stats, "summary.storage", "stored_bytes_peak", "number", minimum=0))
    if "cache" in scenario:
        cache = doc.get(scenario, "scenario", "cache", "object")
        run.dram_bytes = doc.get(cache, "scenario.cache", "dram_bytes", "number", minimum=0)
        run.storage_read_bytes = doc.get(summary, "summary", "storage_read_bytes", "number", minimum=0)
        if run.dram_bytes > 0:
            tier = summary.get("dram_tier")
            if tier is None:  # null or absent
                doc.fail("summary.dram_tier", "an object (scenario.cache.dram_bytes is %g)" % run.dram_bytes,
                         "null" if "dram_tier" in summary else "nothing (key missing)")
            doc.check(tier, "summary.dram_tier", "object")
            run.dram_tier = DramTierStats(
                hit_rate=_fraction(doc, tier, "summary.dram_tier", "hit_rate"),
                snic_bytes_saved=doc.get(tier, "summary.dram_tier", "snic_bytes_saved", "number", minimum=0))


def _range(doc, root, key):
    value = doc.get(root, "", key, "object", default=None, nullable=True)
    if value is None:
        return (None, None)
    return tuple(doc.get(value, key, k, "number", default=None, nullable=True, minimum=0)
                 for k in ("pd_min", "pd_max"))


def _sweep(doc, root):
    points = doc.get(root, "", "points", "array")
    if not points:
        doc.fail("points", "a non-empty array", "[]")
    out = []
    for i, p in enumerate(points):
        at = _join("points", i)
        doc.check(p, at, "object")
        big_p = doc.get(p, at, "P", "integer", minimum=1)
        big_d = doc.get(p, at, "D", "integer", minimum=1)
        sets = doc.get(p, at, "sets", "object", default={})
        out.append(SweepPoint(
            name=doc.get(p, at, "name", "string", default="p%d-d%d" % (big_p, big_d)),
            P=big_p, D=big_d,
            pd=doc.get(p, at, "pd", "number", default=big_p / big_d, positive=True),
            sets={k: sets[k] for k in sorted(sets)},
            jct_s=doc.get(p, at, "jct_s", "number", default=None, nullable=True, minimum=0),
            utilization=doc.numbers(p, at, "utilization", nullable=True),
            bottleneck=doc.get(p, at, "bottleneck", "string", default=None, nullable=True),
            bottleneck_free=doc.get(p, at, "bottleneck_free", "bool", default=None, nullable=True),
            first_saturated=doc.get(p, at, "first_saturated", "string", default=None, nullable=True),
        ))
    return Sweep(path=doc.path, scenario=_short_path(doc.get(root, "", "scenario", "string", default="")),
                 analytic=_range(doc, root, "analytic_range"), measured=_range(doc, root, "measured_range"),
                 points=out)


def _capacity(doc, root):
    slo = doc.get(root, "", "slo", "object", default={})
    points = doc.get(root, "", "points", "array")
    if not points:
        doc.fail("points", "a non-empty array", "[]")
    out = []
    for i, p in enumerate(points):
        at = _join("points", i)
        doc.check(p, at, "object")
        out.append(CapacityPoint(
            aps=doc.get(p, at, "aps", "number", positive=True),
            meets_slo=doc.get(p, at, "meets_slo", "bool", default=None, nullable=True),
            ttft_s=doc.numbers(p, at, "ttft_s"),
            tpot_s=doc.numbers(p, at, "tpot_s"),
            ttft_breakdown_s=doc.numbers(p, at, "ttft_breakdown_s") if "ttft_breakdown_s" in p else {},
        ))
    out.sort(key=lambda q: q.aps)

    def optional_positive(obj, prefix, key):
        return doc.get(obj, prefix, key, "number", default=None, nullable=True, positive=True)

    return Capacity(path=doc.path, scenario=_short_path(doc.get(root, "", "scenario", "string", default="")),
                    slo_ttft_s=optional_positive(slo, "slo", "ttft_s"),
                    slo_tpot_s=optional_positive(slo, "slo", "tpot_s"),
                    capacity_aps=optional_positive(root, "", "capacity_aps"),
                    points=out)


def _one_of(names):
    quoted = ['"%s"' % n for n in names]
    return "%s or %s" % (", ".join(quoted[:-1]), quoted[-1])


def _plan_point(doc, p, at, goal, objective):
    doc.check(p, at, "object")
    sets = doc.get(p, at, "sets", "object", default={})
    cost = doc.get(p, at, "cost_per_hour", "number", default=None, nullable=True, minimum=0)
    if objective == "cost" and cost is None:  # the size axis is money per hour: every point needs a price
        doc.fail(_join(at, "cost_per_hour"), 'a number >= 0 (the objective is "cost")',
                 "null" if "cost_per_hour" in p else "nothing (key missing)")
    point = PlanPoint(
        name=doc.get(p, at, "name", "string"),
        p=doc.get(p, at, "p", "integer", minimum=1),
        d=doc.get(p, at, "d", "integer", minimum=1),
        sets={k: sets[k] for k in sorted(sets)},
        gpus=doc.get(p, at, "gpus", "integer", minimum=1),
        cost_per_hour=cost,
        ok=doc.get(p, at, "ok", "bool"),
        ttft_judged_s=doc.get(p, at, "ttft_judged_s", "number", default=None, nullable=True, minimum=0),
        jct_s=doc.get(p, at, "jct_s", "number", default=None, nullable=True, minimum=0),
        x=0.0, y=None)
    point.x = float(cost if objective == "cost" else point.gpus)
    point.y = point.ttft_judged_s if goal == "slo" else point.jct_s
    return point


def _plan(doc, root):
    goal = doc.get(root, "", "goal", "string")
    if goal not in PLAN_GOALS:
        doc.fail("goal", _one_of(PLAN_GOALS), _show(goal))
    objective = doc.get(root, "", "objective", "string")
    if objective not in PLAN_OBJECTIVES:
        doc.fail("objective", _one_of(PLAN_OBJECTIVES), _show(objective))
    points = doc.get(root, "", "points", "array")
    if not points:
        doc.fail("points", "a non-empty array", "[]")
    out = [_plan_point(doc, p, _join("points", i), goal, objective) for i, p in enumerate(points)]
    names = {p.name for p in out}
    front = doc.get(root, "", "pareto_front", "array")
    for i, name in enumerate(front):
        doc.check(name, _join("pareto_front", i), "string")
        if name not in names:
            doc.fail(_join("pareto_front", i), "the name of one of the points", _show(name))
    rec = doc.get(root, "", "recommended", "object", default=None, nullable=True)
    slo = doc.get(root, "", "slo", "object", default=None, nullable=True) or {}
    sets = doc.get(root, "", "sets", "array", default=[])

    def optional(obj, prefix, key, kind="number", **kw):
        return doc.get(obj, prefix, key, kind, default=None, nullable=True, **kw)

    return Plan(
        path=doc.path,
        scenario=os.path.basename(doc.get(root, "", "scenario", "string", default="")),
        mode=doc.get(root, "", "mode", "string", default=""),
        goal=goal,
        objective=objective,
        size_unit=doc.get(root, "", "size_unit", "string",
                          default="money per hour" if objective == "cost" else "GPUs"),
        sets=[doc.check(v, _join("sets", i), "string") for i, v in enumerate(sets)],
        slo_ttft_s=optional(slo, "slo", "ttft_s", positive=True),
        slo_tpot_s=optional(slo, "slo", "tpot_s", positive=True),
        slo_statistic=optional(slo, "slo", "statistic", "string") or "",
        jct_target_s=optional(root, "", "jct_target_s", positive=True),
        recommended=None if rec is None else _plan_point(doc, rec, "recommended", goal, objective),
        objective_value=None if rec is None else optional(rec, "recommended", "objective_value", minimum=0),
        front=front,
        runs=doc.get(root, "", "runs", "integer", minimum=0),
        runs_this_invocation=optional(root, "", "runs_this_invocation", "integer", minimum=0),
        wall_s=optional(root, "", "wall_s", minimum=0),
        points=out)
