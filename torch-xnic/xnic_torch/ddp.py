# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""DDP helpers: the gradient comm hook and the hidden-communication measure.

``allreduce_hook`` is DDP's own averaging all-reduce, plus one thing: the
last bucket of a backward pass (``bucket.is_last()``: the first layers'
gradients, which the next forward needs first) is marked critical, so an
xnic process group sends it on its stream 0, traffic class 0, ahead of
bulk traffic. With any other group it is the plain averaging all-reduce,
so the same hook serves both sides of a comparison.
"""
import torch.distributed as dist


def allreduce_hook(pg, bucket):
    """DDP comm hook (register with ``ddp.register_comm_hook(pg, hook)``)."""
    buf = bucket.buffer()
    buf.div_(pg.size())
    if bucket.is_last() and hasattr(pg, "_set_critical"):
        pg._set_critical()
    work = dist.all_reduce(buf, group=pg, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0])


def hidden_fraction(op_times, compute_end_ns=None):
    """Share of communication time hidden behind computation.

    ``op_times``: (enqueued, started, finished, stream) tuples of one
    step's collectives (``ProcessGroupXnic._take_op_times()``), in
    time.monotonic_ns() nanoseconds. A collective communicates from when it
    is enqueued until it finishes; the union of those intervals is the
    communication time. Backward computes until ``compute_end_ns`` (by
    default the last enqueue: DDP launches a bucket as soon as its last
    gradient is computed, so the last launch is the end of the gradient
    computation). Returns (hidden fraction 0..1, communication seconds),
    or (None, 0.0) when there was no communication.
    """
    iv = sorted((t[0], t[2]) for t in op_times)
    if not iv:
        return None, 0.0
    end = max(t[0] for t in op_times) if compute_end_ns is None \
        else compute_end_ns
    total = hidden = 0
    cur_s, cur_e = iv[0]
    merged = []
    for s, e in iv[1:]:
        if s <= cur_e:
            cur_e = max(cur_e, e)
        else:
            merged.append((cur_s, cur_e))
            cur_s, cur_e = s, e
    merged.append((cur_s, cur_e))
    for s, e in merged:
        total += e - s
        hidden += max(0, min(e, end) - s)
    return (hidden / total if total else None), total / 1e9
