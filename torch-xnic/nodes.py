# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Run ranks of a job as processes forked into emulated nodes.

An emulated node is a network namespace (``ip netns``) holding its veth
end and its xnic device (exclusive to it: ``rdma system set netns
exclusive``). ``import torch`` takes a minute or more in the test VM, so
the launcher imports it once and forks every rank from it; each child
enters its node the way ``ip netns exec`` does (setns to the namespace, a
private mount namespace with a fresh /sys, so that it sees its own
netdevs and RDMA device), then runs the rank. Killing a child is a node
dying; forking a new one is the node restarting.
"""
import ctypes
import os
import signal
import time

CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000
MS_REC = 16384
MS_SLAVE = 1 << 19
MNT_DETACH = 2

_libc = ctypes.CDLL(None, use_errno=True)


def _ok(rc, what):
    if rc != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"{what}: {os.strerror(e)}")


def enter_netns(name):
    """Move the calling process into network namespace ``name`` with its
    own view of /sys (as ``ip netns exec name`` does)."""
    fd = os.open(f"/run/netns/{name}", os.O_RDONLY)
    try:
        _ok(_libc.setns(fd, CLONE_NEWNET), f"setns {name}")
    finally:
        os.close(fd)
    _ok(_libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _ok(_libc.mount(b"", b"/", None, MS_SLAVE | MS_REC, None),
        "mount --make-rslave /")
    _ok(_libc.umount2(b"/sys", MNT_DETACH), "umount /sys")
    _ok(_libc.mount(b"sysfs", b"/sys", b"sysfs", 0, None), "mount sysfs")


def run_ranks(n, body, netns=None, env=None, timeout=600):
    """Fork ``n`` ranks; rank r runs ``body(r)`` (its return value is the
    exit code) in namespace ``netns[r]`` (None: stay) with ``env(r)``
    added to its environment. Waits for all, killing any left after
    ``timeout`` seconds. Returns [(exitcode or -signal, seconds)] by rank.
    """
    pids = {}
    t0 = time.monotonic()
    for r in range(n):
        pid = os.fork()
        if pid == 0:
            rc = 70
            try:
                if netns:
                    enter_netns(netns[r])
                if env:
                    os.environ.update(env(r))
                rc = body(r)
            except BaseException as e:  # the child must never return
                print(f"rank {r}: {type(e).__name__}: {e}", flush=True)
            finally:
                os._exit(rc if isinstance(rc, int) else 70)
        pids[pid] = r
    res = [None] * n
    killed = False
    while pids:
        if not killed and time.monotonic() - t0 > timeout:
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
            killed = True
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            time.sleep(0.05)
            continue
        r = pids.pop(pid)
        res[r] = (os.waitstatus_to_exitcode(status), time.monotonic() - t0)
    return res
