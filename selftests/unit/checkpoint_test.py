#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Unit test of torch-xnic/xnic_torch/checkpoint.py (no torch needed):
the Young/Daly arithmetic, the schedule recomputed as costs change, and
atomic writes that never leave a torn checkpoint."""
import importlib.util
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "checkpoint", os.path.join(HERE, "../../torch-xnic/xnic_torch/checkpoint.py"))
ck = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ck)


class YoungDaly(unittest.TestCase):
    def test_seconds(self):
        # sqrt(2 * 2 s * 3600 s) = 120 s
        self.assertAlmostEqual(ck.young_daly_seconds(2.0, 3600.0), 120.0)
        self.assertAlmostEqual(ck.young_daly_seconds(0.5, 100.0), 10.0)

    def test_steps(self):
        self.assertEqual(ck.young_daly_steps(2.0, 3600.0, 0.5), 240)
        self.assertEqual(ck.young_daly_steps(2.0, 3600.0, 0.5, 100), 100)
        self.assertEqual(ck.young_daly_steps(1e-6, 1.0, 10.0), 1)  # >= 1

    def test_bad(self):
        for c, m in ((0, 1), (1, 0), (-1, 5), (float("nan"), 5)):
            with self.assertRaises(ValueError):
                ck.young_daly_seconds(c, m)
        with self.assertRaises(ValueError):
            ck.young_daly_steps(1, 1, 0)
        with self.assertRaises(ValueError):
            ck.Schedule(every=0)

    def test_schedule_recomputes(self):
        s = ck.Schedule(mtbf_s=3600.0, alpha=1.0)
        self.assertTrue(s.due(1))          # first: to measure the cost
        s.step_done(0.5)
        s.saved(1, 2.0)                    # 120 s / 0.5 s = 240 steps
        self.assertEqual(s.interval, 240)
        self.assertFalse(s.due(240))
        self.assertTrue(s.due(241))
        s.saved(241, 8.0)                  # cost x4: interval x2
        self.assertEqual(s.interval, 480)
        s.step_done(1.0)                   # step time x2: interval / 2
        self.assertEqual(s.interval, 240)

    def test_schedule_ema_and_fixed(self):
        s = ck.Schedule(mtbf_s=100.0, alpha=0.5)
        s.step_done(1.0)
        s.saved(1, 1.0)
        s.saved(2, 3.0)                    # EMA cost 2.0: sqrt(400) = 20
        self.assertEqual(s.interval, 20)
        f = ck.Schedule(every=5)
        f.step_done(0.1)
        f.saved(5, 100.0)
        self.assertEqual(f.interval, 5)
        self.assertTrue(f.due(10) and not f.due(9))


class Atomic(unittest.TestCase):
    def test_write_and_latest(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(ck.latest(d), (0, None))
            for step in (3, 12, 7):
                ck.atomic_write(ck.path_for(d, step),
                                lambda f, s=step: f.write(b"x" * s))
            self.assertEqual(ck.latest(d), (12, ck.path_for(d, 12)))
            ck.prune(d, keep=2)
            self.assertEqual(sorted(os.listdir(d)),
                             ["ckpt-00000007.pt", "ckpt-00000012.pt"])

    def test_crash_mid_write_leaves_old(self):
        with tempfile.TemporaryDirectory() as d:
            p = ck.path_for(d, 5)
            ck.atomic_write(p, lambda f: f.write(b"old"))

            def torn(f):
                f.write(b"half of a new checkp")
                raise KeyboardInterrupt("killed mid-write")
            with self.assertRaises(KeyboardInterrupt):
                ck.atomic_write(p, torn)
            with open(p, "rb") as f:
                self.assertEqual(f.read(), b"old")
            with self.assertRaises(OSError):
                ck.atomic_write(ck.path_for(d, 9),
                                lambda f: (_ for _ in ()).throw(OSError("ENOSPC")))
            self.assertEqual(os.listdir(d), ["ckpt-00000005.pt"])
            # A temporary file left by a killed process is never "latest".
            open(os.path.join(d, ".ckpt-00000011.pt.tmp.123"), "wb").close()
            self.assertEqual(ck.latest(d), (5, p))


if __name__ == "__main__":
    r = unittest.main(exit=False, verbosity=2).result
    bad = len(r.failures) + len(r.errors)
    print(f"# Totals: pass:{r.testsRun - bad} fail:{bad} xfail:0 xpass:0 skip:0 error:0")
    sys.exit(1 if bad else 0)
