#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""train.py - DDP training of a small MLP over xnic (and gloo, to compare).

One rank's job is ``train()``: an MLP of about 0.9 M parameters, synthetic
data from a seed (rank r's batch of step s depends only on seed, s and r,
so a restarted job sees the same data), SGD with momentum, DDP with
buckets of --bucket-mb and the xnic_torch.ddp comm hook (the last bucket
on traffic class 0), checkpoints (xnic_torch.checkpoint: Young/Daly
interval, atomic writes) and a restart from the newest one (--resume).

suites.py runs jobs of ranks forked into emulated nodes (nodes.py): the
selftest, the demo and the benchmark.
"""
import json
import os
import signal
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xnic_torch  # noqa: E402  registers the backend "xnic"
from xnic_torch import checkpoint as ck  # noqa: E402
from xnic_torch.ddp import allreduce_hook, hidden_fraction  # noqa: E402

OUT = 16
# Model sizes: "demo" about 0.9 M parameters (3.7 MB of gradients a step),
# "small" about 0.13 M for the selftest (under TCG a step of "demo" takes
# seconds).
SIZES = {"demo": (256, (1024, 512, 256), 32),
         "small": (128, (256, 256, 128), 16)}


def make_model(seed, size="demo"):
    torch.manual_seed(seed)
    d, widths, _ = SIZES[size]
    layers = []
    for w in widths:
        layers += [torch.nn.Linear(d, w), torch.nn.ReLU()]
        d = w
    layers.append(torch.nn.Linear(d, OUT))
    return torch.nn.Sequential(*layers)


def batch(seed, step, rank, size="demo"):
    d, _, b = SIZES[size]
    g = torch.Generator().manual_seed(seed * 1000003 + step * 1009 + rank)
    return (torch.randn(b, d, generator=g),
            torch.randint(0, OUT, (b,), generator=g))


def noop_hook(pg, bucket):
    """A DDP comm hook that communicates nothing: the bench's compute-only
    step (each rank keeps its own gradients), the floor of any backend's
    step time on the same CPUs."""
    fut = torch.futures.Future()
    fut.set_result(bucket.buffer())
    return fut


def link_bytes():
    """tx+rx bytes of this node's netdevs (its member links)."""
    total = 0
    for n in os.listdir("/sys/class/net"):
        if n == "lo":
            continue
        for d in ("tx", "rx"):
            try:
                with open(f"/sys/class/net/{n}/statistics/{d}_bytes") as f:
                    total += int(f.read())
            except OSError:
                pass
    return total


def train(job, rank):
    """Run one rank of ``job`` (a dict, see suites.py); returns its exit
    code. Rank 0 writes ``job["out"]`` (final parameters) and
    ``job["out"] + ".json"`` (per-step figures)."""
    torch.set_num_threads(1)
    n = job["world"]
    dist.init_process_group(job["backend"], init_method=job["init"],
                            rank=rank, world_size=n,
                            timeout=timedelta(seconds=job["timeout"]))
    pg = dist.group.WORLD
    model = make_model(job["seed"], job["size"])
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    start = 0
    if job.get("resume"):
        start, path = ck.latest(job["ckpt"])
        if path:
            st = ck.load(path)
            model.load_state_dict(st["model"])
            opt.load_state_dict(st["opt"])
            torch.set_rng_state(st["rng"])
    # DDP caps its first bucket at _DEFAULT_FIRST_BUCKET_BYTES (1 MiB), the
    # others at bucket_cap_mb: the same cap for all, so that the small
    # model too is reduced in several buckets.
    dist._DEFAULT_FIRST_BUCKET_BYTES = int(job["bucket_mb"] * 2**20)
    ddp = DDP(model, process_group=pg, bucket_cap_mb=job["bucket_mb"])
    ddp.register_comm_hook(pg, noop_hook if job.get("nocomm")
                           else allreduce_hook)
    sched = ck.Schedule(mtbf_s=job.get("mtbf", 3600.0),
                        every=job.get("ckpt_every"))
    sched.last = start
    xnic = hasattr(pg, "_take_op_times")
    rec = {"start": start, "steps": [], "ckpts": [], "backend": job["backend"],
           "world": n}
    b0 = link_bytes()
    if xnic:
        pg._take_op_times()
    for step in range(start + 1, job["steps"] + 1):
        if step == job.get("die_step") and rank == job.get("die_rank"):
            os.kill(os.getpid(), signal.SIGKILL)  # a node dies
        x, y = batch(job["seed"], step, rank, job["size"])
        t0 = time.monotonic()
        loss = F.cross_entropy(ddp(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        dt = time.monotonic() - t0
        hid, comm = hidden_fraction(pg._take_op_times()) if xnic else (None, 0)
        rec["steps"].append({"step": step, "loss": loss.item(), "s": dt,
                             "hidden": hid, "comm_s": comm})
        if rank == 0 and job.get("verbose"):
            h = f" hidden {100 * hid:5.1f}%" if hid is not None else ""
            print(f"  {job['backend']} x{n} step {step:3d} loss "
                  f"{loss.item():.5f} {1000 * dt:7.1f} ms{h}", flush=True)
        sched.step_done(dt)
        if job.get("ckpt") and rank == 0 and sched.due(step):
            cost = ck.save(job["ckpt"], step, {
                "step": step, "model": model.state_dict(),
                "opt": opt.state_dict(), "rng": torch.get_rng_state()})
            sched.saved(step, cost)
            rec["ckpts"].append({"step": step, "s": cost,
                                 "next_interval": sched.interval})
    rec["link_bytes"] = link_bytes() - b0
    dist.barrier()
    if rank == 0:
        params = {k: v.detach().clone() for k, v in model.state_dict().items()}
        ck.atomic_write(job["out"], lambda f: torch.save(params, f))
        with open(job["out"] + ".json", "w") as f:
            json.dump(rec, f)
    if xnic:
        pg._shutdown()
    return 0


def compare(a, b):
    """(bit-identical?, max |a - b|, max |a - b| / (|b| + 1e-3)) over the
    parameter files ``a`` and ``b``."""
    pa, pb = torch.load(a), torch.load(b)
    same, dmax, rmax = pa.keys() == pb.keys(), 0.0, 0.0
    for k in pa:
        d = (pa[k] - pb[k]).abs()
        same = same and torch.equal(pa[k], pb[k])
        dmax = max(dmax, d.max().item())
        rmax = max(rmax, (d / (pb[k].abs() + 1e-3)).max().item())
    return same, dmax, rmax


if __name__ == "__main__":
    print("train.py is run by suites.py (python3 suites.py --help)")
    sys.exit(2)
