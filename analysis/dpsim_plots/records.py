"""Reading dpsim's per-turn records (outputs.requests) and their CDF data. Standard library only.

`dpsim run SCENARIO --set outputs.requests=FILE.csv` (or FILE.jsonl) writes one record per completed
turn: a CSV with a header line, or one JSON object per line, with the same keys (times in simulated
seconds; a time not reached is an empty field in CSV, null in JSONL). The figures use three of them:
  ttft_s          the turn's time to first token (a number >= 0)
  tpot_s          its time per output token (a number >= 0; empty / null for a one-token turn)
  first_token_s   when its first token came (a number >= 0; --after compares it)
Other keys are ignored, so newer files with more columns still plot.

load(path, after) streams the file and keeps only three arrays of doubles (TTFT, first-token time and
TPOT of the turns kept), so files with millions of lines fit in memory. Any problem raises
inputs.InputError whose message names the file, the line and the column, e.g.
    out/r.csv: line 7, column ttft_s: expected a number >= 0, got "fast"
is_records(path) tells a records file from a JSON output by its extension (.csv, .jsonl).
cdf(values) gives the data of a CDF; ttft_bins(...) the mean and p99 TTFT per bin of first-token time,
readable_bin(span) the default bin width.
"""

import csv
import json
import math
from array import array
from dataclasses import dataclass

from .inputs import InputError

EXTENSIONS = (".csv", ".jsonl")
# The columns the figures read, in the order the messages name them.
COLUMNS = ("ttft_s", "tpot_s", "first_token_s")
_EXPECTED_HEADER = ("a CSV header naming at least %s (dpsim's outputs.requests records)"
                    % ", ".join(COLUMNS))
_EXPECTED_LINES = "one JSON object per line (dpsim's outputs.requests records)"


def is_records(path):
    """True when path names a per-turn records file (by its extension)."""
    return path.lower().endswith(EXTENSIONS)


@dataclass
class Records:
    path: str
    after: object  # --after (float): only turns with first_token_s > after are kept; None = all
    turns: int  # records in the file
    ttft_s: array  # array('d'): TTFT of each turn kept, file order
    first_token_s: array  # array('d'): its first_token_s, parallel to ttft_s
    tpot_s: array  # array('d'): TPOT of each turn kept that has one (more than one token)

    def kept(self):
        return len(self.ttft_s)

    def origin_s(self):
        """Where bins of first-token time start: --after when given, else 0."""
        return self.after if self.after is not None else 0.0


@dataclass
class Cdf:
    values: list  # sorted ascending; the CDF at values[i] is (i + 1) / n
    p50: float
    p99: float

    def __len__(self):
        return len(self.values)


def percentile(sorted_values, p):
    """The nearest-rank p-th percentile of non-empty sorted_values (as dpsim's summary computes it:
    the ceil(p/100 * n)-th smallest value)."""
    n = len(sorted_values)
    k = math.ceil(p / 100.0 * n)
    return sorted_values[min(n - 1, max(k, 1) - 1)]


def cdf(values):
    """The CDF of values (any iterable of numbers), or None when it is empty."""
    ordered = sorted(values)
    if not ordered:
        return None
    return Cdf(values=ordered, p50=percentile(ordered, 50), p99=percentile(ordered, 99))


@dataclass
class TtftBin:
    start_s: float  # the bin is [start_s, start_s + bin_s) of first-token time
    turns: int  # turns whose first token came in it (> 0)
    mean_s: float  # their mean TTFT
    p99_s: float  # their nearest-rank p99 TTFT (the largest when fewer than 100 turns)


def ttft_bins(first_token_s, ttft_s, bin_s, origin_s=0.0):
    """The turns (parallel sequences of first-token time and TTFT, s) grouped by first-token time into
    bins [origin_s + k * bin_s, origin_s + (k + 1) * bin_s), k = floor((first - origin_s) / bin_s); one
    TtftBin per bin with a turn, in time order (bins without one are left out). REQUIRES bin_s > 0.
    Holds the TTFTs once more, as arrays of doubles per bin, and one bin's sorted copy at a time."""
    groups = {}
    for first, ttft in zip(first_token_s, ttft_s):
        k = math.floor((first - origin_s) / bin_s)
        group = groups.get(k)
        if group is None:
            group = groups[k] = array("d")
        group.append(ttft)
    out = []
    for k in sorted(groups):
        values = sorted(groups.pop(k))
        out.append(TtftBin(start_s=origin_s + k * bin_s, turns=len(values),
                           mean_s=math.fsum(values) / len(values), p99_s=percentile(values, 99)))
    return out


# Bin widths are one of these times a power of ten.
_READABLE = (1, 2, 5)


def readable_bin(span_s, bins=60):
    """A bin width for a span of first-token times (s): span_s / bins rounded to the nearest (by ratio)
    1, 2 or 5 times a power of ten, e.g. 3456 s -> 50 s, 250 s -> 5 s; 1 s when span_s is 0."""
    if not span_s > 0:
        return 1.0
    raw = span_s / bins
    exponent = math.floor(math.log10(raw))
    choices = [m * 10.0 ** e for e in (exponent, exponent + 1) for m in _READABLE]
    return min(choices, key=lambda c: abs(math.log(c / raw)))


def first_token_span(recs):
    """The largest minus the smallest first_token_s of the turns kept in the Records recs (0 when none)."""
    times = [t for rec in recs if rec.kept() for t in (min(rec.first_token_s), max(rec.first_token_s))]
    return max(times) - min(times) if times else 0.0


def cdf_points(sorted_values, max_points=4000):
    """(xs, ys) to draw the CDF of sorted_values as a step line (drawstyle "steps-post"): xs[i] is a
    value, ys[i] the fraction of values <= it. Above max_points values, every k-th rank is kept, and
    the smallest and the largest value always."""
    n = len(sorted_values)
    if n <= max_points:
        ranks = range(n)
    else:
        step = n / float(max_points - 1)
        ranks = sorted({min(n - 1, int(round(i * step))) for i in range(max_points)} | {0, n - 1})
    return [sorted_values[i] for i in ranks], [(i + 1) / n for i in ranks]


def _show(text):
    text = json.dumps(text)
    return text if len(text) <= 60 else text[:57] + "..."


class _Reader:
    """Appends one record's values to the arrays; every failure names the file, line and column."""

    def __init__(self, path, after, where):
        self.path, self.after, self.where = path, after, where  # where: "column" (CSV) or "key" (JSONL)
        self.ttft, self.first, self.tpot = array("d"), array("d"), array("d")
        self.turns = 0

    def fail(self, line, column, expected, got):
        raise InputError("%s: line %d, %s %s: expected %s, got %s"
                         % (self.path, line, self.where, column, expected, got))

    def number(self, line, column, value, nullable=False):
        """value as a float >= 0; None when it is empty (CSV "", JSON null) and nullable."""
        expected = "a number >= 0" + (" or empty" if nullable and self.where == "column" else
                                      " or null" if nullable else "")
        if value is None or value == "":
            if nullable:
                return None
            self.fail(line, column, expected, "nothing (empty)" if value == "" else "null")
        if isinstance(value, str):
            try:
                x = float(value)
            except ValueError:
                self.fail(line, column, expected, _show(value))
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            x = float(value)
        else:
            self.fail(line, column, expected, _show(value))
        if not (math.isfinite(x) and x >= 0):
            self.fail(line, column, expected, _show(value))
        return x

    def add(self, line, ttft, tpot, first):
        ttft = self.number(line, "ttft_s", ttft)
        tpot = self.number(line, "tpot_s", tpot, nullable=True)
        first = self.number(line, "first_token_s", first)
        self.turns += 1
        if self.after is not None and not first > self.after:
            return
        self.ttft.append(ttft)
        self.first.append(first)
        if tpot is not None:
            self.tpot.append(tpot)

    def records(self):
        return Records(path=self.path, after=self.after, turns=self.turns, ttft_s=self.ttft,
                       first_token_s=self.first, tpot_s=self.tpot)


def load(path, after=None):
    """Reads one records file (CSV or JSONL, by extension); keeps the turns whose first_token_s is
    > after (all when after is None). Raises InputError."""
    is_csv = path.lower().endswith(".csv")
    try:
        with open(path, encoding="utf-8", newline="") as f:
            if is_csv:
                return _csv(f, _Reader(path, after, "column"))
            return _jsonl(f, _Reader(path, after, "key"))
    except OSError as e:
        raise InputError("%s: cannot open: %s" % (path, e.strerror or e)) from None
    except UnicodeDecodeError:
        raise InputError("%s: not UTF-8 text; expected %s"
                         % (path, _EXPECTED_HEADER if is_csv else _EXPECTED_LINES)) from None


def _csv(f, reader):
    rows = csv.reader(f)
    try:
        header = next(rows, None)
        if header is None:
            raise InputError("%s: empty file; expected %s" % (reader.path, _EXPECTED_HEADER))
        names = [h.strip() for h in header]
        missing = [c for c in COLUMNS if c not in names]
        if missing:
            raise InputError("%s: line 1: expected %s; missing: %s; the header is: %s"
                             % (reader.path, _EXPECTED_HEADER, ", ".join(missing), _show(",".join(header))))
        i_ttft, i_tpot, i_first = (names.index(c) for c in COLUMNS)
        width = len(names)
        for row in rows:
            if len(row) != width:
                if not row:  # a blank line
                    continue
                raise InputError("%s: line %d: expected %d fields, as in the header, got %d"
                                 % (reader.path, rows.line_num, width, len(row)))
            reader.add(rows.line_num, row[i_ttft], row[i_tpot], row[i_first])
    except csv.Error as e:
        raise InputError("%s: line %d: not valid CSV (%s)" % (reader.path, rows.line_num, e)) from None
    return reader.records()


def _jsonl(f, reader):
    for line, text in enumerate(f, 1):
        if not text.strip():
            continue
        try:
            obj = json.loads(text.rstrip("\r\n"))
        except ValueError as e:
            what = "%s at column %d" % (e.msg, e.colno) if isinstance(e, json.JSONDecodeError) else str(e)
            raise InputError("%s: line %d: not valid JSON (%s); expected %s"
                             % (reader.path, line, what, _EXPECTED_LINES)) from None
        if not isinstance(obj, dict):
            raise InputError("%s: line %d: expected a JSON object with keys %s, got %s"
                             % (reader.path, line, ", ".join(COLUMNS), _show(obj)))
        for key in COLUMNS:
            if key not in obj:
                reader.fail(line, key, "a number >= 0" + (" or null" if key == "tpot_s" else ""),
                            "nothing (key missing)")
        reader.add(line, obj["ttft_s"], obj["tpot_s"], obj["first_token_s"])
    return reader.records()
