#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""suites.py check|demo|bench - DDP over xnic on emulated nodes.

Usage: suites.py SUITE --nodes N --netns FMT --ifname FMT --addr FMT
                 [--steps S] [--workdir DIR] [--timeout SEC]
  FMT: "{}" is the node index for --netns and --ifname (e.g. node{},
  t{}), the node index + 1 for --addr (e.g. 10.199.0.{}). Node i is a
  network namespace with its xnic device and a veth end named by
  --ifname carrying --addr; rank i runs in node i. The torch store (and
  gloo) use those addresses; xnic carries the tensors.

check  2 and 4 ranks: xnic vs gloo (final parameters within tolerance);
       a rank killed mid-run and the job restarted from its checkpoint
       (bit-identical to the uninterrupted run); bad inputs and a dead
       rank (clear errors on every rank, within the timeout).
       Ends with "# Totals: ..." (kselftest style).
demo   N ranks: the xnic job with loss, step time and hidden-communication
       per step, bytes on the links; gloo; the comparison; a node killed,
       the restart; PASS or FAIL.
bench  N ranks: BENCH lines (step time xnic vs gloo, hidden fraction;
       the step of a job that communicates nothing, the floor of both).
The ranks are forked from this process (one `import torch`), nodes.py.
"""
import time
T0 = time.monotonic()
import argparse  # noqa: E402
import json
import os
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import badinput  # noqa: E402
import nodes  # noqa: E402
import train  # noqa: E402

# Final parameters of xnic and gloo agree within this: the two sum the
# ranks' gradients in different orders (float32), and every SGD step
# carries those last-bit differences on.
RTOL, ATOL = 1e-4, 1e-6

results = []


def report(ok, what):
    results.append(ok)
    print(f"{'ok' if ok else 'not ok'} {len(results)} {what}", flush=True)


class Suite:
    def __init__(self, a):
        self.a = a
        self.port = 29500 + os.getpid() % 1000
        self.dir = a.workdir or tempfile.mkdtemp(prefix="xnic-train.")

    def job(self, name, backend, world, **kw):
        self.port += 1
        j = {"backend": backend, "world": world, "seed": 1234,
             "steps": self.a.steps, "timeout": self.a.timeout,
             "size": self.a.model, "mtbf": self.a.mtbf,
             "bucket_mb": 1 if self.a.model == "demo" else 0.125,
             "init": f"tcp://{self.a.addr.format(1)}:{self.port}",
             "out": os.path.join(self.dir, name + ".pt"), "name": name}
        j.update(kw)
        return j

    def run(self, j, body=train.train):
        """Run job ``j`` on its ranks; returns [(rc, seconds, error)]."""
        err = os.path.join(self.dir, j["name"] + ".err")

        def rank_body(r):
            def save(res):
                with open(f"{err}.{r}.json", "w") as f:
                    json.dump(res, f)
            try:
                if body is train.train:
                    return body(j, r)
                save(body(j, r, save))
                return 0
            except Exception as e:
                with open(f"{err}.{r}", "w") as f:
                    f.write(f"{type(e).__name__}: {e}")
                return 1

        def env(r):
            return {"GLOO_SOCKET_IFNAME": self.a.ifname.format(r)}
        ns = [self.a.netns.format(r) for r in range(j["world"])] \
            if self.a.netns else None
        res = nodes.run_ranks(j["world"], rank_body, ns, env,
                              timeout=self.a.timeout * 4 + 120)
        out = []
        for r, (rc, s) in enumerate(res):
            try:
                with open(f"{err}.{r}") as f:
                    msg = f.read()
            except OSError:
                msg = ""
            out.append((rc, s, msg))
        return out

    def figures(self, j):
        with open(j["out"] + ".json") as f:
            rec = json.load(f)
        st = [s["s"] for s in rec["steps"][3:]] or [s["s"] for s in rec["steps"]]
        hid = [s["hidden"] for s in rec["steps"][3:] if s["hidden"] is not None]
        return {"step_ms": 1000 * statistics.median(st),
                "hidden": statistics.mean(hid) if hid else None,
                "link_bytes": rec["link_bytes"], "rec": rec}

    def train_ok(self, j):
        res = self.run(j)
        bad = [f"rank {r}: exit {rc} {m}" for r, (rc, _, m) in enumerate(res)
               if rc]
        report(not bad, f"{j['backend']} DDP, {j['world']} ranks, "
               f"{j['steps']} steps" + ("" if not bad else ": " + "; ".join(bad)))
        return not bad

    def compare(self, world, verbose=False):
        """xnic and gloo jobs of ``world`` ranks; returns the xnic job."""
        jx = self.job(f"xnic{world}", "xnic", world, verbose=verbose)
        jg = self.job(f"gloo{world}", "gloo", world, verbose=verbose)
        if not (self.train_ok(jx) & self.train_ok(jg)):
            report(False, f"xnic vs gloo, {world} ranks: a job failed")
            return jx
        same, dmax, rmax = train.compare(jx["out"], jg["out"])
        fx, fg = self.figures(jx), self.figures(jg)
        report(rmax <= RTOL or dmax <= ATOL,
               f"xnic vs gloo, {world} ranks: final parameters "
               f"{'bit-identical' if same else 'differ'}: max |diff| {dmax:.3g}, "
               f"max relative {rmax:.3g} (tolerance {RTOL:g} relative or {ATOL:g})")
        hid = fx["hidden"]
        print(f"# {world} ranks: step time xnic {fx['step_ms']:.1f} ms, gloo "
              f"{fg['step_ms']:.1f} ms (median); communication hidden behind "
              f"backward {'-' if hid is None else f'{100 * hid:.1f}%'}; "
              f"bytes on node 0's links: xnic {fx['link_bytes']}, gloo "
              f"{fg['link_bytes']}", flush=True)
        self.last = (fx, fg)
        return jx

    def kill_restore(self, world, ref):
        """A rank dies mid-run; the others fail in time; the restart from
        the checkpoint ends bit-identical to ``ref`` (an uninterrupted
        job's parameters)."""
        ckdir = os.path.join(self.dir, f"ckpt{world}")
        shutil.rmtree(ckdir, ignore_errors=True)
        die = world - 1
        jk = self.job(f"kill{world}", "xnic", world, ckpt=ckdir,
                      die_rank=die, die_step=self.a.steps * 2 // 3)
        res = self.run(jk)
        rc_die, t_die = res[die][0], res[die][1]
        others = [(r, x) for r, x in enumerate(res) if r != die]
        # The CM disconnect ends the survivors' waits at once: a loose
        # bound (10 s, well below the timeout) and the dead rank named.
        ok = rc_die == -9 and all(
            rc and "xnic" in m and f"rank {die} (node" in m and
            "is gone" in m and s - t_die < 10
            for _, (rc, s, m) in others)
        report(ok, f"rank {die} of {world} killed at step {jk['die_step']}: "
               + "; ".join(f"rank {r} exit {rc} {s - t_die:.1f} s later: "
                           f"{m.splitlines()[0][:300] if m else ''}"
                           for r, (rc, s, m) in others))
        step, _ = train.ck.latest(ckdir)
        report(step > 0, f"checkpoint of step {step} was there to restart from")
        jr = self.job(f"restore{world}", "xnic", world, ckpt=ckdir,
                      resume=True)
        if not self.train_ok(jr):
            report(False, "restart failed")
            return
        same, dmax, _ = train.compare(jr["out"], ref)
        with open(jr["out"] + ".json") as f:
            start = json.load(f)["start"]
        report(same and start == step,
               f"restarted at step {start}: final parameters "
               f"{'bit-identical' if same else f'differ (max {dmax:.3g})'} "
               "to the uninterrupted run")

    def bad_inputs(self, world):
        j = self.job(f"bad{world}", "xnic", world)
        res = self.run(j, badinput.run)
        per_rank = []
        for r in range(world):
            try:
                with open(os.path.join(self.dir, f"bad{world}.err.{r}.json")) as f:
                    per_rank.append(json.load(f))
            except OSError:
                per_rank.append(None)
                print(f"# bad inputs: rank {r} exit {res[r][0]}: {res[r][2]}")
        names = next((list(p) for p in per_rank if p), [])
        for name in names:
            got = [p.get(name) if p else None for p in per_rank]
            dead = "dead rank" in name  # the dying rank has no result
            ok = all(g and g[0] for g in got if not dead or g)
            ok = ok and all(g is not None for r, g in enumerate(got)
                            if not dead or r != world - 1)
            detail = " | ".join(f"rank {r}: {g[1][:200]}" for r, g in
                                enumerate(got) if g and g[1])
            report(ok, f"{name}, {world} ranks{': ' + detail if detail else ''}")
        if not names:
            report(False, "bad inputs: no rank reported")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("suite", choices=("check", "demo", "bench"))
    p.add_argument("--nodes", type=int, default=4)
    p.add_argument("--netns", default="node{}")
    p.add_argument("--ifname", required=True)
    p.add_argument("--addr", required=True)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--model", choices=tuple(train.SIZES), default="demo")
    p.add_argument("--timeout", type=int, default=30)
    p.add_argument("--workdir")
    p.add_argument("--mtbf", type=float, default=2.0,
                   help="MTBF for the Young/Daly checkpoint interval, s "
                   "(small: the jobs here are short)")
    a = p.parse_args()
    print(f"# torch imported in {time.monotonic() - T0:.0f} s", flush=True)
    s = Suite(a)
    if a.suite == "check":
        ref = s.compare(2)
        s.kill_restore(2, ref["out"])
        s.bad_inputs(min(a.nodes, 4))
        if a.nodes >= 4:
            s.compare(4)
    elif a.suite == "demo":
        print(f"== xnic and gloo DDP, {a.nodes} nodes, {a.steps} steps")
        ref = s.compare(a.nodes, verbose=True)
        print(f"== node {a.nodes - 1} killed mid-run, job restarted")
        s.kill_restore(a.nodes, ref["out"])
    elif s.compare(a.nodes) and hasattr(s, "last"):  # both jobs ran
        fx, fg = s.last
        print(f"BENCH train_step_ms_xnic {fx['step_ms']:.1f} ms")
        print(f"BENCH train_step_ms_gloo {fg['step_ms']:.1f} ms")
        print(f"BENCH train_step_xnic_vs_gloo "
              f"{fx['step_ms'] / fg['step_ms']:.2f} ratio")
        if fx["hidden"] is not None:
            print(f"BENCH train_hidden_comm {100 * fx['hidden']:.1f} %")
        # The same job with no communication at all: the step time's floor
        # on these CPUs, and what each backend's communication adds to it.
        jn = s.job(f"nocomm{a.nodes}", "gloo", a.nodes, nocomm=True)
        if s.train_ok(jn):
            fn = s.figures(jn)["step_ms"]
            print(f"BENCH train_step_ms_nocomm {fn:.1f} ms")
            print(f"BENCH train_comm_ms_xnic {fx['step_ms'] - fn:.1f} ms")
            print(f"BENCH train_comm_ms_gloo {fg['step_ms'] - fn:.1f} ms")
            print(f"BENCH train_step_nocomm_vs_gloo {fn / fg['step_ms']:.2f} "
                  "ratio")
    bad = results.count(False)
    print(f"# Totals: pass:{len(results) - bad} fail:{bad} xfail:0 xpass:0 "
          "skip:0 error:0")
    if a.suite == "demo":
        print("PASS" if not bad else "FAIL")
    if not a.workdir:
        shutil.rmtree(s.dir, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
