#!/usr/bin/env python3
"""Reruns the commands whose output the READMEs quote and compares (make docs-check; README.md, "Development").

A quoted output is a fenced block right after a marker comment in a README:

    <!-- docs-check name=demo cmd="build/dpsim demo" -->
    ```
    ...what the command prints on stdout...
    ```

Marker fields: name (unique), cmd (run from the repository's root with /bin/sh; a leading "build/dpsim" is
replaced by --binary), long (rerun only without --quick: minutes of runs, the target run before a release),
exit (the expected exit code, default 0), ignore (a regular expression: the lines that match, quoted or
output, are dropped before comparing, e.g. wall times and paths) and engine (an engine file whose fitted values the block's
"parameter fitted" table must give, rounded as the file holds them: checked even with --quick, without a
run). A block's first line may echo the command ("$ build/dpsim ..."); it is not compared. Exit 0 when
every output matches, 1 with a unified diff per mismatch, 2 on a malformed marker.
"""
import argparse, difflib, json, os, re, shlex, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MARKER = re.compile(r'<!--\s*docs-check\s+(.*?)\s*-->')


def readmes():
    out = []
    for d, dirs, files in os.walk(ROOT):
        dirs[:] = [x for x in dirs if not x.startswith('.') and not x.startswith('build') and x != 'out']
        out += [os.path.join(d, f) for f in files if f == 'README.md']
    return sorted(out)


def parse_fields(text, where):
    fields = {}
    for tok in shlex.split(text):
        k, _, v = tok.partition('=')
        fields[k] = v if _ else True
    for key in ('name', 'cmd'):
        if not isinstance(fields.get(key), str) or not fields[key]:
            sys.exit(f'dpsim: docs-check: {where}: a marker needs {key}="..."')
    return fields


def quoted_outputs():
    checks = []
    for path in readmes():
        lines = open(path, encoding='utf-8').read().split('\n')
        for i, line in enumerate(lines):
            m = MARKER.search(line)
            if not m:
                continue
            where = f'{os.path.relpath(path, ROOT)}:{i + 1}'
            f = parse_fields(m.group(1), where)
            j = i + 1
            if j >= len(lines) or not lines[j].startswith('```'):
                sys.exit(f'dpsim: docs-check: {where}: expected a fenced block on the next line')
            end = next((k for k in range(j + 1, len(lines)) if lines[k].startswith('```')), None)
            if end is None:
                sys.exit(f'dpsim: docs-check: {where}: the block is not closed')
            block = lines[j + 1:end]
            if block and block[0].startswith('$ '):
                block = block[1:]
            checks.append(dict(f, where=where, expected=block))
    names = [c['name'] for c in checks]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        sys.exit(f'dpsim: docs-check: names used twice: {", ".join(sorted(dup))}')
    return checks


def fitted_values(block):
    """{parameter: value} from a calibrate report's table (the lines after 'parameter ... fitted')."""
    out, on = {}, False
    for line in block:
        if line.startswith('parameter') and 'fitted' in line:
            on = True
            continue
        if on:
            parts = line.split()
            if len(parts) < 2 or parts[0] == 'point':
                break
            out[parts[0]] = float(parts[1])
    return out


def check_engine(c):
    """The engine file holds the block's fitted values as rounded: each within 0.05% of it."""
    engine = json.load(open(os.path.join(ROOT, c['engine']), encoding='utf-8'))
    wrong = []
    for key, v in fitted_values(c['expected']).items():
        node = engine
        for part in key.split('.'):
            node = node[part]
        if abs(node - v) > 5e-4 * abs(v):
            wrong.append(f'{key}: the README fits {v:g}, {c["engine"]} holds {node:g}')
    if not fitted_values(c['expected']):
        wrong.append('no "parameter ... fitted" table in the block')
    return wrong


def run(c, binary):
    cmd = c['cmd']
    if cmd.startswith('build/dpsim'):
        cmd = shlex.quote(binary) + cmd[len('build/dpsim'):]
    p = subprocess.run(cmd, shell=True, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p.returncode, dropped(c, p.stdout.rstrip('\n').split('\n')), p.stderr


def dropped(c, lines):
    """`lines` without those that the marker's `ignore` matches (in the quoted block and in the output)."""
    if 'ignore' not in c:
        return lines
    drop = re.compile(c['ignore'])
    return [x for x in lines if not drop.search(x)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--quick', action='store_true', help='skip the long outputs (rerun only the quick ones)')
    ap.add_argument('--only', default='', help='comma-separated names')
    ap.add_argument('--list', action='store_true', help='list the quoted outputs and exit')
    ap.add_argument('--binary', default=os.path.join(ROOT, 'build', 'dpsim'))
    a = ap.parse_args()
    checks = quoted_outputs()
    if a.only:
        want = set(a.only.split(','))
        checks = [c for c in checks if c['name'] in want]
    if a.list:
        for c in checks:
            print(f"{c['name']:<20} {'long ' if c.get('long') else 'quick'} {c['where']}: {c['cmd']}")
        return 0
    failed = 0
    for c in checks:
        problems = check_engine(c) if 'engine' in c else []
        if c.get('long') and a.quick:
            status = 'skipped (long)'
        else:
            code, lines, err = run(c, a.binary)
            want_code = int(c.get('exit', 0))
            if code != want_code:
                problems.append(f'exit {code}, expected {want_code}; stderr: {err.strip()[-400:]}')
            expected = dropped(c, c['expected'])
            if lines != expected:
                diff = difflib.unified_diff(expected, lines, f"{c['where']} (quoted)", 'now', lineterm='')
                problems.append('output differs:\n' + '\n'.join(diff))
            status = 'ok'
        if problems:
            failed += 1
            print(f"FAIL {c['name']} ({c['where']}): {c['cmd']}")
            for p in problems:
                print('  ' + p.replace('\n', '\n  '))
        else:
            print(f"{status:<14} {c['name']} ({c['where']})")
    print(f'{len(checks)} quoted outputs, {failed} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
