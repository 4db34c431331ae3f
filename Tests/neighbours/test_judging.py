"""The neighbours harness's judging of a test that fails only with the
extension (suites.py: judge(), judge_alone()), without running any suite.

    python3 Tests/neighbours/test_judging.py

Runs are scripted: a fake `again` answers each run alone with an XCTest
line, as GRDB's binary prints it, so each case is exact and takes no time.
"""
import itertools
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import suites  # noqa: E402

TEST = "ValueObservationTests.testCancellableInvalidation1"


def scripted(with_runs, without_runs):
    """An `again` whose runs with the extension pass or fail as with_runs
    says (True: fails; None: the test prints nothing, as a crash), in
    turn, and likewise without; it records how many runs each way."""
    script = {True: iter(with_runs), False: iter(without_runs)}
    calls = {True: 0, False: 0}

    def again(test, loaded):
        calls[loaded] += 1
        fails = next(script[loaded])
        if fails is None:
            return "Fatal error: crashed before its result\n"
        return f"Test Case '{test}' {'failed' if fails else 'passed'} (0.010 seconds)\n"
    return again, calls


class Judging(unittest.TestCase):
    def test_fisher_matches_hand_computed_values(self):
        # All 6 failures on the runs with the extension: 1 table in C(12, 6).
        self.assertAlmostEqual(suites.fisher_one_sided(6, 6, 0, 6), 1 / 924)
        # 4 of 6 with, 0 without: C(8, 2) / C(12, 6).
        self.assertAlmostEqual(suites.fisher_one_sided(4, 6, 0, 6), 28 / 924)
        # Equal counts are never evidence against us.
        self.assertGreater(suites.fisher_one_sided(5, 6, 5, 6), 0.5)

    def test_a_race_that_fails_as_often_without_is_not_ours(self):
        # GRDB's testCancellableInvalidation1 on a loaded machine: 5 of 6
        # alone, with the extension and without it.
        again, calls = scripted([True] * 5 + [False], [True, False] + [True] * 4)
        ours, why = suites.judge_alone(TEST, again, suites.XCTEST_LINE)
        self.assertFalse(ours, why)
        self.assertEqual(calls, {True: 6, False: 6}, "the same number of runs each way")
        self.assertIn("failed 5 of 6 runs with it, 5 of 6 without", why)

    def test_a_failure_of_ours_fails_every_time_with_and_never_without(self):
        again, calls = scripted([True] * 6, [False] * 6)
        ours, why = suites.judge_alone(TEST, again, suites.XCTEST_LINE)
        self.assertTrue(ours, why)
        self.assertEqual(calls, {True: 6, False: 6})

    def test_a_crash_alone_counts_as_a_failure(self):
        again, _ = scripted([None] * 6, [False] * 6)
        ours, why = suites.judge_alone(TEST, again, suites.XCTEST_LINE)
        self.assertTrue(ours, why)

    def test_a_test_that_passes_alone_with_the_extension_is_not_run_without(self):
        again, calls = scripted([False] * 6, [])
        ours, why = suites.judge_alone(TEST, again, suites.XCTEST_LINE)
        self.assertFalse(ours, why)
        self.assertEqual(calls, {True: 6, False: 0})

    def test_an_open_case_runs_more_each_way_then_decides(self):
        # 3 of 6 with, 0 without (p = 0.09): 6 more each way. A race of
        # ours failing half the time alone is then caught...
        again, calls = scripted([True, False] * 6, [False] * 12)
        ours, why = suites.judge_alone(TEST, again, suites.XCTEST_LINE)
        self.assertTrue(ours, why)
        self.assertEqual(calls, {True: 12, False: 12})
        # ...and a racy test a little worse with it, by chance, is not.
        again, calls = scripted([True] * 12, [True] * 5 + [False] + [True] * 5 + [False])
        ours, why = suites.judge_alone(TEST, again, suites.XCTEST_LINE)
        self.assertFalse(ours, why)
        self.assertEqual(calls, {True: 12, False: 12})

    def test_every_table_of_six_runs_each_way(self):
        # Ours only with clearly more failures with the extension: never
        # when it fails as often or more often without.
        for failed_with, failed_without in itertools.product(range(7), repeat=2):
            verdict = suites.judge(failed_with, 6, failed_without, 6)
            if failed_with <= failed_without:
                self.assertEqual(verdict, "not ours", (failed_with, failed_without))
            if failed_with == 6 and failed_without == 0:
                self.assertEqual(verdict, "ours")


if __name__ == "__main__":
    unittest.main()
