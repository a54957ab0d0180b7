# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""One rank's part of the bad-input and correctness checks of the xnic
backend (suites.py runs it on every rank and judges the results)."""
import os
import time
from datetime import timedelta

import torch
import torch.distributed as dist


def _error(fn):
    """(message or None, seconds) of calling fn()."""
    t0 = time.monotonic()
    try:
        fn()
        return None, time.monotonic() - t0
    except RuntimeError as e:
        return str(e), time.monotonic() - t0


def run(job, rank, save):
    """Returns a dict name -> (ok, detail) for this rank; the rank that
    dies on purpose hands it to ``save`` first."""
    torch.set_num_threads(1)
    n = job["world"]
    dist.init_process_group("xnic", init_method=job["init"], rank=rank,
                            world_size=n,
                            timeout=timedelta(seconds=job["timeout"]))
    res = {}

    def want_error(name, fn, *needles):
        msg, s = _error(fn)
        ok = msg is not None and all(x in msg for x in needles)
        res[name] = (ok, f"{s:.1f} s: {msg}")

    # Tensors of different sizes on different ranks.
    want_error("mismatched sizes",
               lambda: dist.all_reduce(torch.ones(1000 + rank)),
               "calls do not match")
    # Same size, different types.
    want_error("mismatched dtypes", lambda: dist.all_reduce(
        torch.ones(8, dtype=torch.float32 if rank else torch.float64)),
        "calls do not match")
    # An operation xnic does not have.
    want_error("unsupported op", lambda: dist.all_reduce(
        torch.ones(4), op=dist.ReduceOp.AVG), "does not support")
    # Bad arguments on one rank only: every rank fails.
    outs = [torch.empty(3) for _ in range(n - 1 if rank == 0 else n)]
    want_error("bad arguments on rank 0",
               lambda: dist.all_gather(outs, torch.ones(3)),
               "rank(s) 0 gave bad arguments" if rank else "bad arguments")

    # After those errors the group still works, every type and op right.
    a = torch.arange(1, 1001, dtype=torch.float32)
    checks = {}
    t = a * (rank + 1)
    dist.all_reduce(t)
    checks["float32 sum"] = torch.equal(t, a * (n * (n + 1) // 2))
    # Inputs exact in bfloat16 (integers below 256); coll adds in float32
    # and rounds once, as the reference does.
    t = (a[:63] * (rank + 1)).bfloat16()
    dist.all_reduce(t)
    checks["bfloat16 sum"] = torch.equal(
        t, (a[:63] * (n * (n + 1) // 2)).bfloat16())
    t = torch.full((77,), 1 << 40, dtype=torch.int64) + rank
    dist.all_reduce(t)
    checks["int64 sum"] = bool((t == n * (1 << 40) + n * (n - 1) // 2).all())
    t = torch.arange(50, dtype=torch.float64) * (-1) ** rank * rank
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    want = torch.arange(50, dtype=torch.float64) * max(
        r * (-1) ** r for r in range(n))
    checks["float64 max"] = torch.equal(t, want)
    t = torch.full((9,), 1 << rank, dtype=torch.int32)
    dist.all_reduce(t, op=dist.ReduceOp.BOR)
    checks["int32 bor"] = bool((t == (1 << n) - 1).all())
    t = torch.full((5,), 0.5, dtype=torch.float16)
    dist.all_reduce(t)
    checks["float16 sum"] = bool((t == 0.5 * n).all())
    t = torch.full((10, 10), float(rank)).t()  # not contiguous
    dist.broadcast(t, src=n - 1)
    checks["broadcast"] = bool((t == n - 1).all())
    outs = [torch.empty(6, dtype=torch.int16) for _ in range(n)]
    dist.all_gather(outs, torch.full((6,), rank, dtype=torch.int16))
    checks["all_gather"] = all(bool((o == r).all()) for r, o in enumerate(outs))
    flat = torch.empty(n * 4)
    dist.all_gather_into_tensor(flat, torch.full((4,), float(rank)))
    checks["all_gather_into_tensor"] = torch.equal(
        flat, torch.arange(n).float().repeat_interleave(4))
    t = torch.full((7,), float(rank + 1))
    dist.reduce(t, dst=1)
    checks["reduce"] = rank != 1 or bool((t == n * (n + 1) / 2).all())
    dist.barrier()
    for k, v in checks.items():
        res[k] = (v, "")

    # A rank dies: the others fail within the timeout, with a clear error.
    dist.barrier()
    if rank == n - 1:
        save(res)
        time.sleep(1)
        os._exit(0)
    want_error("dead rank", lambda: dist.all_reduce(torch.ones(100000)),
               "xnic")
    s = float(res["dead rank"][1].split()[0])
    if s > job["timeout"] + 10:
        res["dead rank"] = (False, res["dead rank"][1] + " (too late)")
    return res
