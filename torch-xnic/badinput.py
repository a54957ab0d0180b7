# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""One rank's part of the bad-input and correctness checks of the xnic
backend (suites.py runs it on every rank and judges the results)."""
import gc
import os
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import xnic_torch


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
    # Tensors xnic cannot take, on every rank or on one.
    want_error("quantized tensor", lambda: dist.all_reduce(
        torch.quantize_per_tensor(torch.ones(4), 0.1, 0, torch.quint8)),
        "a quantized tensor")
    want_error("mkldnn tensor on rank 0", lambda: dist.all_reduce(
        torch.ones(4).to_mkldnn() if rank == 0 else torch.ones(4)),
        "layout Mkldnn" if rank == 0 else "rank(s) 0 gave bad arguments")
    # An output whose elements share memory (expand(): stride 0) on rank
    # 0: refused there before anything moves, the others fail as for any
    # bad argument on one rank; every rank's tensor keeps its values.
    name = "all_reduce into a stride-0 (expanded) tensor on rank 0"
    bad = torch.full((1,), 5.).expand(4) if rank == 0 else torch.full(
        (4,), float(rank))
    want_error(name, lambda: dist.all_reduce(bad),
               "elements share memory" if rank == 0
               else "rank(s) 0 gave bad arguments")
    if not bool((bad == (5 if rank == 0 else rank)).all()):
        res[name] = (False, f"{res[name][1]} (data moved: {bad.tolist()})")
    # A device list indexed by a LOCAL_RANK that is not a number.
    env = {k: os.environ.get(k) for k in ("XNIC_DEVICE", "LOCAL_RANK")}
    os.environ.update(XNIC_DEVICE="xa,xb", LOCAL_RANK="1x")
    want_error("LOCAL_RANK not a number",
               lambda: xnic_torch.pick_device(rank), "LOCAL_RANK=1x is not")
    for k, v in env.items():
        if v is None:
            del os.environ[k]
        else:
            os.environ[k] = v
    # Ranks whose XNIC_TORCH_STREAMS differ: a new group fails at once on
    # every rank (not after its timeout), naming each rank's value.
    saved = os.environ.get("XNIC_TORCH_STREAMS")
    os.environ["XNIC_TORCH_STREAMS"] = "2" if rank == 0 else "3"
    name = "XNIC_TORCH_STREAMS differing between ranks"
    want_error(name, lambda: dist.new_group(
        backend="xnic", timeout=timedelta(seconds=10)),
        "XNIC_TORCH_STREAMS differ", ", ".join(["2"] + ["3"] * (n - 1)))
    if float(res[name][1].split()[0]) > 5:
        res[name] = (False, res[name][1] + " (too late)")
    if saved is None:
        del os.environ["XNIC_TORCH_STREAMS"]
    else:
        os.environ["XNIC_TORCH_STREAMS"] = saved
    # An operation xnic does not have.
    want_error("unsupported op", lambda: dist.all_reduce(
        torch.ones(4), op=dist.ReduceOp.AVG), "does not support")
    # Bad arguments on one rank only: every rank fails.
    outs = [torch.empty(3) for _ in range(n - 1 if rank == 0 else n)]
    want_error("bad arguments on rank 0",
               lambda: dist.all_gather(outs, torch.ones(3)),
               "rank(s) 0 gave bad arguments" if rank else "bad arguments")

    # An output it cannot fill in place: the error says why.
    want_error("all_gather_into_tensor into a non-contiguous output",
               lambda: dist.all_gather_into_tensor(
                   torch.empty(4, n).t(), torch.ones(4)), "not contiguous")

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
    # Not aligned to its 4-byte elements on rank 0 (torch.frombuffer at an
    # odd offset): summed like any other.
    t = torch.frombuffer(bytearray(4 * 6 + 1), dtype=torch.float32,
                         offset=1) if rank == 0 else torch.empty(6)
    t.fill_(rank + 1)
    msg, _ = _error(lambda: dist.all_reduce(t))
    checks["float32 sum, rank 0's tensor not aligned"] = msg is None and bool(
        (t == n * (n + 1) // 2).all())
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
    # Into a parameter and a view of one (copies autograd must not see).
    p = torch.nn.Parameter(torch.full((3, 2), float(rank)))
    dist.all_reduce(p, op=dist.ReduceOp.MAX)
    checks["all_reduce MAX into a parameter"] = bool((p == n - 1).all())
    p = torch.nn.Parameter(torch.full((3, 2), float(rank)))
    dist.broadcast(p.t(), src=1)
    checks["broadcast into a parameter's view"] = bool((p == 1).all())
    t = torch.full((7,), float(rank + 1))
    dist.reduce(t, dst=1)
    checks["reduce"] = rank != 1 or bool((t == n * (n + 1) / 2).all())
    ops_checks(n, rank, checks)
    # Splits the ranks disagree on (rank 0 moves a row between its first
    # two sources): a clear error on every rank, the group still works.
    c = [r + rank + 1 for r in range(n)]
    osp = list(c)
    if rank == 0:
        osp[0], osp[1] = osp[0] + 1, osp[1] - 1
    want_error("alltoall splits that disagree",
               lambda: dist.all_to_all_single(
                   torch.empty(sum(c)), torch.zeros(sum(c)),
                   output_split_sizes=osp, input_split_sizes=c),
               "alltoall: rank")
    pending_checks(n, checks)
    completion_checks(n, rank, checks)
    # A collective marked critical (stream 0) on rank 0 only: refused on
    # every rank, and the next ones on the bulk streams still pair up.
    pg = dist.distributed_c10d._get_default_group()
    if rank == 0:
        pg._set_critical()
    want_error("a collective marked critical on rank 0 only",
               lambda: dist.all_reduce(torch.ones(4)), "calls do not match",
               "stream 0")
    t = torch.ones(4)
    msg, _ = _error(lambda: [dist.all_reduce(t) for _ in range(3)])
    checks["after the critical mismatch, the streams still pair up"] = (
        msg is None and bool((t == n ** 3).all()))
    subgroup_device_checks(n, rank, checks)
    wait_timeout_checks(rank, res, checks)
    # Rows of different sizes on different ranks.
    want_error("alltoall rows that differ", lambda: dist.all_to_all_single(
        torch.empty(n, 2 + rank % 2), torch.zeros(n, 2 + rank % 2)),
        "calls do not match")
    dist.barrier()
    for k, v in checks.items():
        res[k] = (v, "")

    # A rank dies: the others fail within the timeout, with a clear error.
    dist.barrier()
    if rank == n - 1:
        save(res)
        time.sleep(1)
        os._exit(0)
    # The CM disconnect ends the wait at once: bound loosely (10 s; the
    # group timeout is longer), the message names the rank.
    gone = f"rank {n - 1} (node"
    want_error("dead rank", lambda: dist.all_reduce(torch.ones(100000)),
               "xnic", gone, "is gone")
    want_error("a collective after the dead rank", dist.barrier,
               "xnic", gone, "is gone")
    for k in ("dead rank", "a collective after the dead rank"):
        if float(res[k][1].split()[0]) > 10:
            res[k] = (False, res[k][1] + " (too late)")
    return res


def ops_checks(n, rank, checks):
    """The collectives DDP does not use, against gloo where gloo 1.13 has
    them (gather, scatter, all_to_all_single) and against exact values
    (small integers) everywhere."""
    gl = dist.new_group(backend="gloo")

    def twice(fn):
        """fn(group) run over xnic and over gloo: (xnic's, gloo's)."""
        return fn(None), fn(gl)

    out = torch.empty(5)
    dist.reduce_scatter(out, [torch.arange(5.) + 10 * rank + d
                              for d in range(n)])
    checks["reduce_scatter"] = torch.equal(
        out, sum(torch.arange(5.) + 10 * r + rank for r in range(n)))
    out = torch.empty(3, dtype=torch.int64)
    dist.reduce_scatter_tensor(out, torch.arange(3 * n) * (rank + 1))
    checks["reduce_scatter_tensor (int64)"] = torch.equal(
        out, torch.arange(3 * rank, 3 * rank + 3) * (n * (n + 1) // 2))

    def gather(g):
        lst = [torch.empty(4) for _ in range(n)] if rank == 0 else None
        dist.gather(torch.full((4,), 1.5 * rank), lst, dst=0, group=g)
        return lst
    x, g = twice(gather)
    checks["gather"] = rank != 0 or (
        all(torch.equal(a, b) for a, b in zip(x, g)) and
        all(bool((t == 1.5 * r).all()) for r, t in enumerate(x)))

    def scatter(g):
        o = torch.empty(3, dtype=torch.int32)
        lst = [torch.full((3,), 7 * r, dtype=torch.int32)
               for r in range(n)] if rank == n - 1 else None
        dist.scatter(o, lst, src=n - 1, group=g)
        return o
    x, g = twice(scatter)
    checks["scatter"] = torch.equal(x, g) and bool((x == 7 * rank).all())

    # Rank r sends r + d + 1 rows of 2 to rank d, valued 100 r + d.
    def a2a(g):
        isp = [rank + d + 1 for d in range(n)]
        osp = [r + rank + 1 for r in range(n)]
        inp = torch.cat([torch.full((k, 2), 100. * rank + d)
                         for d, k in enumerate(isp)])
        o = torch.empty(sum(osp), 2)
        dist.all_to_all_single(o, inp, output_split_sizes=osp,
                               input_split_sizes=isp, group=g)
        return o
    x, g = twice(a2a)
    want = torch.cat([torch.full((r + rank + 1, 2), 100. * r + rank)
                      for r in range(n)])
    checks["all_to_all_single (uneven splits)"] = (
        torch.equal(x, g) and torch.equal(x, want))
    # Rank 0 sends nothing: an input of no rows (2 x 0 x 3 elements).
    isp = [0 if rank == 0 else 2] * n
    o = torch.empty(2 * (n - 1), 3)
    dist.all_to_all_single(o, torch.full((sum(isp), 3), float(rank)),
                           [0] + [2] * (n - 1), isp)
    checks["all_to_all_single (a rank with no rows)"] = torch.equal(
        o, torch.arange(1., n).repeat_interleave(2 * 3).view(-1, 3))
    # In place, the input as the output (gloo 1.13's result is wrong).
    a = torch.arange(2. * n) + 100 * rank
    dist.all_to_all_single(a, a)
    checks["all_to_all_single in place"] = torch.equal(a, torch.cat(
        [torch.arange(2. * rank, 2. * rank + 2) + 100 * r for r in range(n)]))
    outs = [torch.empty(rank + 2, dtype=torch.int16) for _ in range(n)]
    dist.all_to_all(outs, [torch.full((d + 2,), 10 * rank + d,
                                      dtype=torch.int16) for d in range(n)])
    checks["all_to_all (list)"] = all(
        bool((o == 10 * r + rank).all()) for r, o in enumerate(outs))
    dist.destroy_process_group(gl)


def wait_timeout_checks(rank, res, checks):
    """work.wait(timeout) is gloo's (c10d's Work::wait): on a collective
    the others have not joined, "Operation timed out!" after the timeout;
    the collective goes on, and ends once they join. One they never join
    ends when every rank destroys its group: no hang, no crash."""
    n = dist.get_world_size()
    store = dist.distributed_c10d._get_default_store()
    t = torch.full((4,), float(rank))
    name = "wait(timeout=1 s) on a collective the others join later"
    if rank == 0:
        w = dist.all_reduce(t, async_op=True)
        msg, s = _error(lambda: w.wait(timeout=timedelta(seconds=1)))
        res[name] = (msg is not None and "Operation timed out!" in msg and
                     0.9 < s < 5, f"{s:.1f} s: {msg}")
        store.set("badinput/timed-out", "1")
        msg, _ = _error(w.wait)
        if msg is not None:
            res[name] = (False, f"then wait(): {msg}")
    else:
        store.get("badinput/timed-out")  # join after rank 0's timeout
        dist.all_reduce(t)
        res[name] = (True, "")
    checks["... the collective ends once they join"] = bool(
        (t == n * (n - 1) // 2).all())
    name = "wait(timeout) on a collective no other rank joins, destroy"
    g = dist.new_group(backend="xnic")
    if rank == 0:
        w = dist.all_reduce(torch.ones(4), group=g, async_op=True)
        msg, s = _error(lambda: w.wait(timeout=timedelta(milliseconds=500)))
    dist.barrier()
    t0 = time.monotonic()
    dist.destroy_process_group(g)
    del g  # the last reference: the destructor runs here
    gc.collect()
    s2 = time.monotonic() - t0
    if rank == 0:
        msg2, _ = _error(w.wait)
        res[name] = (msg is not None and "Operation timed out!" in msg and
                     s < 5 and s2 < 10 and msg2 is not None,
                     f"{s:.1f} s: {msg}; destroyed in {s2:.1f} s; then "
                     f"wait(): {msg2}")
    else:
        res[name] = (s2 < 10, f"destroyed in {s2:.1f} s")


def subgroup_device_checks(n, rank, checks):
    """XNIC_DEVICE lists every node's device and LOCAL_RANK is unset: a
    subgroup's rank takes the entry of its rank in the job, not that of
    its rank in the subgroup (another node's device, not even visible in
    this node's namespace)."""
    if n < 3:
        return
    own = xnic_torch.pick_device(rank)  # the node's only device: TAGx<i>
    saved = {k: os.environ.get(k) for k in ("XNIC_DEVICE", "LOCAL_RANK")}
    os.environ.pop("LOCAL_RANK", None)
    os.environ["XNIC_DEVICE"] = ",".join(
        own[:own.rindex("x") + 1] + str(i) for i in range(n))
    ok = True
    try:
        g = dist.new_group(ranks=[0, 2], backend="xnic")  # 2 is its rank 1
        if rank in (0, 2):
            t = torch.full((4,), float(rank))
            dist.all_reduce(t, group=g)
            ok = bool((t == 2).all())
            dist.destroy_process_group(g)
    except RuntimeError:
        ok = False
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    checks["subgroup: an XNIC_DEVICE list indexed by the job's rank"] = ok


def completion_checks(n, rank, checks):
    """Futures complete in call order, whichever stream finished first:
    a callback that issues a collective does so in the same order on
    every rank. And tensors made under inference_mode are written by the
    collectives that copy into them (every dtype but float32 and
    bfloat16, gathers)."""
    order = []
    for i in range(3):
        big = torch.ones(1 << 20)  # streams 1 and 2 (XNIC_TORCH_STREAMS=3)
        small = torch.ones(8)
        wb = dist.all_reduce(big, async_op=True)
        ws = dist.all_reduce(small, async_op=True)
        fb = wb.get_future().then(lambda f, i=i: order.append(("big", i)))
        fs = ws.get_future().then(lambda f, i=i: order.append(("small", i)))
        fb.wait()
        fs.wait()
    checks["futures complete in call order"] = order == [
        (k, i) for i in range(3) for k in ("big", "small")]

    def inference():
        with torch.inference_mode():
            t = torch.full((5,), rank + 1, dtype=torch.int64)
            dist.all_reduce(t)
            outs = [torch.empty(3) for _ in range(n)]
            dist.all_gather(outs, torch.full((3,), float(rank)))
            return bool((t == n * (n + 1) // 2).all()) and all(
                bool((o == r).all()) for r, o in enumerate(outs))
    ok = []
    msg, _ = _error(lambda: ok.append(inference()))
    checks["int64 all_reduce and all_gather under inference_mode"] = (
        msg is None and ok == [True])


def pending_checks(n, checks):
    """A group destroyed with collectives pending whose futures have Python
    callbacks: its destructor, run holding the GIL, lets them finish. A
    callback that waits for another collective."""
    g = dist.new_group(backend="xnic")
    ts = [torch.full((10000,), float(dist.get_rank())) for _ in range(50)]
    ws = [dist.all_reduce(t, group=g, async_op=True) for t in ts]
    seen = []
    for w in ws:
        w.get_future().then(lambda f: seen.append(1))
    dist.destroy_process_group(g)
    del g  # the last reference: the destructor runs here
    gc.collect()
    for w in ws:
        w.wait()
    checks["destroy_process_group with collectives pending"] = (
        len(seen) == len(ws) and
        all(bool((t == n * (n - 1) // 2).all()) for t in ts))
    # A future's callback that waits for another collective (PowerSGD's
    # DDP hook does): it runs off the progress thread, which it waits for.
    u = torch.ones(4)
    fut = dist.all_reduce(torch.ones(1 << 16), async_op=True).get_future()
    fut = fut.then(lambda f: dist.all_reduce(
        u, async_op=True).get_future().wait()[0])
    checks["a callback that waits for another collective"] = bool(
        (fut.wait() == n).all())
    # ... for one enqueued before it, finishing at about the same time.
    v = torch.ones(4)
    w1 = dist.all_reduce(torch.ones(4), async_op=True)
    w2 = dist.all_reduce(v, async_op=True)
    fut = w1.get_future().then(lambda f: w2.get_future().wait()[0])
    checks["a callback that waits for an earlier collective"] = bool(
        (fut.wait() == n).all())
