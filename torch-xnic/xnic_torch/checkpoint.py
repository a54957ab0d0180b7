# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Checkpoints: when (Young/Daly) and how (atomically).

Young/Daly: with a checkpoint costing C seconds and a mean time between
failures M, the interval between checkpoints that loses the least time is
about sqrt(2 C M) (J. W. Young, CACM 17(9), 1974; J. T. Daly, FGCS 22(3),
2006, to first order). ``Schedule`` turns that into a number of steps from
the measured step time and the measured cost of the last checkpoints, and
recomputes it whenever either changes.

Atomic: ``atomic_write`` writes a temporary file in the target directory,
fsyncs it, renames it over the final name and fsyncs the directory, so a
crash at any moment leaves either the old checkpoint or the new one, never
a torn file. ``latest`` finds the newest complete checkpoint.

This module imports torch only to save and load (its arithmetic is
unit-tested without torch: selftests/unit/checkpoint_test.py).
"""
import math
import os
import re
import time

_NAME = re.compile(r"^ckpt-(\d{8})\.pt$")


def young_daly_seconds(cost_s, mtbf_s):
    """Checkpoint interval in seconds: sqrt(2 * cost * MTBF).

    cost_s: seconds one checkpoint takes (> 0); mtbf_s: mean time between
    failures in seconds (> 0). Raises ValueError otherwise.
    """
    if not (cost_s > 0 and mtbf_s > 0):
        raise ValueError("Young/Daly needs cost > 0 and MTBF > 0, got "
                         f"cost {cost_s!r} s, MTBF {mtbf_s!r} s")
    return math.sqrt(2.0 * cost_s * mtbf_s)


def young_daly_steps(cost_s, mtbf_s, step_s, max_steps=None):
    """The Young/Daly interval as a whole number of steps (at least 1).

    step_s: seconds per training step (> 0); max_steps: upper bound (None:
    none).
    """
    if not step_s > 0:
        raise ValueError(f"step time must be > 0, got {step_s!r} s")
    n = max(1, int(round(young_daly_seconds(cost_s, mtbf_s) / step_s)))
    return min(n, max_steps) if max_steps else n


class Schedule:
    """When to checkpoint: every ``every`` steps if given, else Young/Daly.

    Feed it ``step_done(seconds)`` after each step and ``saved(seconds)``
    after each checkpoint; ``due(step)`` says whether to checkpoint after
    ``step``. Costs and step times are exponential moving averages (weight
    ``alpha`` on the newest). Before the first checkpoint there is no cost
    measured: the first one is taken after the first step, to measure it.
    """

    def __init__(self, mtbf_s=3600.0, every=None, alpha=0.5, max_steps=None):
        if every is not None and every < 1:
            raise ValueError(f"checkpoint every {every} steps: must be >= 1")
        if not mtbf_s > 0:
            raise ValueError(f"MTBF must be > 0, got {mtbf_s!r} s")
        self.mtbf_s, self.every, self.alpha = mtbf_s, every, alpha
        self.max_steps = max_steps
        self.cost_s = self.step_s = None
        self.last = 0          # step of the last checkpoint
        self.interval = every or 1

    def _ema(self, old, new):
        return new if old is None else self.alpha * new + (1 - self.alpha) * old

    def _update(self):
        if self.every is None and self.cost_s and self.step_s:
            self.interval = young_daly_steps(self.cost_s, self.mtbf_s,
                                             self.step_s, self.max_steps)

    def step_done(self, seconds):
        self.step_s = self._ema(self.step_s, seconds)
        self._update()

    def saved(self, step, seconds):
        self.last = step
        self.cost_s = self._ema(self.cost_s, max(seconds, 1e-6))
        self._update()

    def due(self, step):
        return step - self.last >= self.interval


def atomic_write(path, write, fsync=True):
    """Write ``path`` all or nothing: ``write(fileobj)`` fills a temporary
    file beside it, which is fsynced and renamed over ``path``; the
    directory is fsynced after. If ``write`` raises, the temporary file is
    removed, ``path`` is untouched and the exception propagates."""
    d = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(d, f".{os.path.basename(path)}.tmp.{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            if fsync:
                os.fsync(f.fileno())
        os.rename(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    if fsync:
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def path_for(directory, step):
    return os.path.join(directory, f"ckpt-{step:08d}.pt")


def latest(directory):
    """(step, path) of the newest complete checkpoint, or (0, None)."""
    best = (0, None)
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return best
    for n in names:
        m = _NAME.match(n)
        if m and int(m.group(1)) > best[0]:
            best = (int(m.group(1)), os.path.join(directory, n))
    return best


def prune(directory, keep=2):
    """Remove all but the ``keep`` newest complete checkpoints."""
    found = sorted(n for n in os.listdir(directory) if _NAME.match(n))
    for n in found[:-keep]:
        os.unlink(os.path.join(directory, n))


def save(directory, step, state, fsync=True):
    """Save ``state`` (anything torch.save takes) as step ``step``;
    returns the seconds it took."""
    import torch
    t0 = time.monotonic()
    os.makedirs(directory, exist_ok=True)
    atomic_write(path_for(directory, step), lambda f: torch.save(state, f),
                 fsync)
    prune(directory)
    return time.monotonic() - t0


def load(path):
    import torch
    return torch.load(path)
