#!/usr/bin/env python3
"""Unit tests of tests/docs/docs_check.py on a scratch README: a quoted output that matches, one that does
not, the ignore rule, the exit code and the engine file's fitted values (python3 -m unittest)."""
import json, os, sys, tempfile, unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import docs_check  # noqa: E402

REPORT = '''parameter                            fitted     spread                range      start
kernels.prefill_efficiency        0.3949773     0.0099             [0.2, 1]        0.6
storage.request_overhead_s     2.204279e-05      2e-06          [0, 0.0001]      5e-05
point        quantity                     measured  simulated    error tolerance  scatter  fits'''


class DocsCheck(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.root = docs_check.ROOT
        docs_check.ROOT = self.dir

    def tearDown(self):
        docs_check.ROOT = self.root

    def readme(self, text):
        with open(os.path.join(self.dir, 'README.md'), 'w') as f:
            f.write(text)

    def test_match_mismatch_ignore_and_exit(self):
        self.readme('<!-- docs-check name=a cmd="printf \'x 1\\\\ny 2\\\\n\'" -->\n```\n$ cmd\nx 1\ny 2\n```\n'
                    '<!-- docs-check name=b cmd="printf \'x 1\\\\n\'" -->\n```\nx 2\n```\n'
                    '<!-- docs-check name=c exit=3 ignore="^t " cmd="printf \'t 9\\\\nz\\\\n\'; exit 3" -->\n'
                    '```\nt 1\nz\n```\n')
        checks = {c['name']: c for c in docs_check.quoted_outputs()}
        self.assertEqual(checks['a']['expected'], ['x 1', 'y 2'])  # the echoed command is not compared
        self.assertEqual(docs_check.run(checks['a'], 'unused')[1], ['x 1', 'y 2'])
        self.assertNotEqual(docs_check.run(checks['b'], 'unused')[1], checks['b']['expected'])
        code, lines, _ = docs_check.run(checks['c'], 'unused')
        self.assertEqual(code, 3)
        self.assertEqual(lines, docs_check.dropped(checks['c'], checks['c']['expected']))

    def test_engine_values_rounded_as_the_file_holds_them(self):
        os.makedirs(os.path.join(self.dir, 'e'))
        engine = {'kernels': {'prefill_efficiency': 0.395}, 'storage': {'request_overhead_s': 2.204e-05}}
        json.dump(engine, open(os.path.join(self.dir, 'e', 'x.json'), 'w'))
        c = {'engine': 'e/x.json', 'expected': REPORT.split('\n')}
        self.assertEqual(docs_check.check_engine(c), [])
        engine['kernels']['prefill_efficiency'] = 0.4916  # the file not refitted
        json.dump(engine, open(os.path.join(self.dir, 'e', 'x.json'), 'w'))
        self.assertEqual(len(docs_check.check_engine(c)), 1)

    def test_a_marker_without_a_block_or_name_is_an_error(self):
        self.readme('<!-- docs-check name=a cmd="true" -->\nno block\n')
        with self.assertRaises(SystemExit):
            docs_check.quoted_outputs()
        self.readme('<!-- docs-check cmd="true" -->\n```\n```\n')
        with self.assertRaises(SystemExit):
            docs_check.quoted_outputs()


if __name__ == '__main__':
    unittest.main()
