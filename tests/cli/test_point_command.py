#!/usr/bin/env python3
"""The `slr-sweep point` contract: JSON keys, determinism across thread counts, exit codes and
one-line errors that name the argument."""
import json
import math
import os
import subprocess
import sys
import unittest

BINARY = os.environ.get("SLR_SWEEP", "slr-sweep")
TIMING_KEYS = {"wall_s", "grad_time_s", "peak_rss_mb"}  # measurements of the run, not results


def run(*args):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=300)


def point(*args):
    result = run("point", *args)
    if result.returncode != 0:
        raise AssertionError(f"exit {result.returncode}: {result.stderr}")
    return json.loads(result.stdout)


class PointContract(unittest.TestCase):
    def test_population_keys(self):
        out = point("--method", "population", "--task", "spiked", "--nu", "1", "--L", "3",
                    "--activation", "linear", "--samples", "20000", "--seed", "4")
        for key in ("method", "task", "nu", "L", "delta", "activation", "samples", "seed", "risk",
                    "risk_stderr", "bayes_risk", "bayes_risk_stderr", "order_parameters", "status"):
            self.assertIn(key, out)
        self.assertEqual(set(out["order_parameters"]),
                         {"m_kk", "m_kv", "m_vk", "m_vv", "q_kk", "q_kv", "q_vv"})
        self.assertEqual(out["status"], "ok")
        # Exact optimum of linear attention (docs/theory.md §3): 6/11 at nu = 1, L = 3.
        self.assertAlmostEqual(out["risk"], 6 / 11, delta=max(4 * out["risk_stderr"], 3e-3))

    def test_mismatched_minimum_from_the_swapped_start(self):
        # docs/theory.md §3b; tests/reference/mismatched.json: spiked ν = 4, L = 10, softmax: ℶ = 0.8695
        # (distinct, error 0.0012), E = 0.4468.
        out = point("--method", "population", "--start", "swapped", "--task", "spiked", "--nu", "4", "--L", "10",
                    "--activation", "softmax", "--samples", "100000", "--seed", "1")
        for key in ("risk", "risk_stderr", "order_parameters", "outcome", "matched_risk", "status"):
            self.assertIn(key, out)
        self.assertEqual(len(out["order_parameters"]), 7)
        self.assertEqual(out["outcome"], "distinct")
        self.assertAlmostEqual(out["risk"], 0.8695, delta=3 * (out["risk_stderr"] + 0.0012))
        self.assertAlmostEqual(out["matched_risk"], 0.4468, delta=0.005)
        # Key mostly along v*, value mostly along k*: the roles stay swapped.
        self.assertGreater(abs(out["order_parameters"]["m_kv"]), abs(out["order_parameters"]["m_kk"]))

    def test_length_pmf_and_erf_offset_are_reported(self):
        out = point("--method", "bayes", "--L-pmf", "1:0.25,3:0.75", "--samples", "1000",
                    "--activation", "erf", "--erf-offset", "-1")
        self.assertEqual(out["L_pmf"], {"1": 0.25, "3": 0.75})
        self.assertNotIn("L", out)
        self.assertEqual(out["erf_offset"], -1)

    def test_hard_max_bayes_is_noise_only(self):
        out = point("--method", "bayes", "--task", "max", "--nu", "inf", "--delta", "0.5",
                    "--samples", "1000")
        self.assertEqual(out["nu"], "inf")
        self.assertAlmostEqual(out["risk"], 0.25, places=12)

    def test_unbounded_status(self):
        out = point("--method", "population", "--task", "max", "--nu", "inf", "--samples", "5000")
        self.assertEqual(out["status"], "unbounded")
        self.assertIn("message", out)
        self.assertLess(out["risk"], 2e-3)

    def test_lbfgs_ends_at_its_best_point_when_the_loss_turns_non_finite(self):
        # A training that reaches the rounding floor of F at iteration 9 (rel_grad 1.005e-6, just
        # above tol): the next line searches degenerate and their trial points have a non-finite
        # loss. The run must end at once at the best point seen, with finite results, not walk on
        # with NaN weights for every remaining iteration (40 evaluations each) and report diverged.
        out = point("--method", "erm", "--task", "spiked", "--nu", "1", "--L", "3", "--activation", "softmax",
                    "--alpha", "0.5", "--r-k", "10", "--r-v", "10", "--D", "1414", "--seed", "15750669531092943893",
                    "--max-iter", "40", "--test-samples", "1000")
        self.assertNotEqual(out["status"], "diverged", out.get("message"))
        self.assertLess(out["grad_evals"], 200)
        self.assertTrue(math.isfinite(out["train_loss"]) and math.isfinite(out["risk"]))
        self.assertTrue(all(math.isfinite(v) for v in out["order_parameters"].values()))
        self.assertLess(out["rel_grad"], 1e-5)

    def test_same_json_for_any_thread_count(self):
        args = ("--method", "population", "--task", "max", "--nu", "2", "--L-pmf", "2:0.5,4:0.5",
                "--activation", "softplus-kernel", "--samples", "20000", "--seed", "9")
        one = point(*args, "--threads", "1")
        two = point(*args, "--threads", "2")
        for out in (one, two):
            for key in TIMING_KEYS:
                out.pop(key, None)
        self.assertEqual(one, two)


class BadInput(unittest.TestCase):
    def assert_rejected(self, args, names):
        result = run("point", *args)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertEqual(result.stdout, "")
        lines = result.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, result.stderr)
        self.assertIn(names, lines[0])

    def test_each_bad_argument_is_named(self):
        cases = [
            (["--method", "magic"], "magic"),
            (["--task", "spike"], "--task"),
            (["--nu", "-1"], "--nu"),
            (["--nu", "abc"], "--nu"),
            (["--task", "spiked", "--nu", "inf"], "--nu"),
            (["--L", "0"], "--L"),
            (["--L-pmf", "1:0.5,2:0.4"], "--L-pmf"),
            (["--delta", "-0.1"], "--delta"),
            (["--activation", "relu"], "--activation"),
            (["--samples", "10"], "--samples"),
            (["--samples", "1.5"], "--samples"),
            (["--cap", "0"], "--cap"),
            (["--alpha", "2"], "--alpha"),
            (["--frobnicate", "1"], "frobnicate"),
        ]
        for args, name in cases:
            with self.subTest(args=args):
                self.assert_rejected(args, name)


class Help(unittest.TestCase):
    def test_help_lists_everything(self):
        top = run("--help")
        self.assertEqual(top.returncode, 0)
        self.assertIn("point", top.stdout)
        sub = run("point", "--help")
        self.assertEqual(sub.returncode, 0)
        for flag in ("--method", "--task", "--nu", "--L", "--L-pmf", "--delta", "--activation",
                     "--erf-offset", "--samples", "--seed", "--threads"):
            self.assertIn(flag, sub.stdout)
        # The testing-only method and its options are not listed (they still run when named).
        self.assertNotIn("synthetic", sub.stdout)
        self.assertNotIn("--cost-us", sub.stdout)
        # An option several methods declare differently lists each method's range and default.
        line = next(l for l in sub.stdout.splitlines() if l.strip().startswith("--max-iter"))
        for text in ("fixed-point: integer in [1, 1e+07], default 500", "erm: integer in [1, 1e+09], default 10000",
                     "erm [tied-attention]: integer in [1, 1e+08], default 20000"):
            self.assertIn(text, line)

    def test_help_of_one_method(self):
        slr = run("point", "--method", "erm", "--help")
        tied = run("point", "--model", "tied-attention", "--method", "erm", "--help")
        self.assertEqual((slr.returncode, tied.returncode), (0, 0))
        self.assertNotEqual(slr.stdout, tied.stdout)

        def flag_line(text, flag):
            return next((l for l in text.splitlines() if l.strip().startswith(flag + " ")), None)

        # Each shows its own defaults and choices, and only its own parameters.
        self.assertIn("default 10000", flag_line(slr.stdout, "--max-iter"))
        self.assertIn("{informed, random, given, overlaps}", flag_line(slr.stdout, "--init"))
        self.assertIn("default 20000", flag_line(tied.stdout, "--max-iter"))
        self.assertIn("default 1e-07", flag_line(tied.stdout, "--tol"))
        self.assertIsNone(flag_line(tied.stdout, "--activation"))  # a parameter of the slr model
        self.assertIsNone(flag_line(slr.stdout, "--lambda"))       # of tied attention
        self.assertIsNone(flag_line(slr.stdout, "--samples"))      # of the theory methods
        self.assertIn("--D", slr.stdout)
        self.assertIn("--d", tied.stdout)

    def test_did_you_mean(self):
        for args, hint in ((["--method", "fixed-piont"], "did you mean 'fixed-point'?"),
                           (["--activation", "softmx"], "did you mean 'softmax'?"),
                           (["--model", "tied", "--method", "erm"], "did you mean 'tied-attention'?")):
            with self.subTest(args=args):
                result = run("point", *args)
                self.assertEqual(result.returncode, 2)
                self.assertIn(hint, result.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
