"""The neighbours harness's judging (Tests/neighbours/test_judging.py),
run with the Python tests so that make test runs it: one check per case."""
import os
import sys
import unittest

import checks

HERE = os.path.dirname(os.path.abspath(__file__))


def run():
    sys.path.insert(0, os.path.join(HERE, "..", "neighbours"))
    import test_judging  # noqa: E402
    suite = unittest.defaultTestLoader.loadTestsFromModule(test_judging)
    for case in suite:
        for test in (case if isinstance(case, unittest.TestSuite) else [case]):
            result = unittest.TestResult()
            test.run(result)
            problems = [str(error) for _, error in result.failures + result.errors]
            checks.check(f"neighbour judging: {test.id()}", problems, 1)
