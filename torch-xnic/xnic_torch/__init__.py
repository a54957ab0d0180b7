# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""PyTorch DDP over xnic.

``import xnic_torch`` registers the c10d backend ``"xnic"`` with
torch.distributed (PyTorch 1.13's third-party backend API), so that
``torch.distributed.init_process_group("xnic", ...)`` or
``torch.distributed.new_group(backend="xnic")`` give a process group whose
collectives run over this rank's xnic device ($XNIC_DEVICE, else the one
device the node sees). See ../README and Documentation/training.rst.
"""
import torch.distributed as dist

from . import _C  # noqa: E402  (needs torch.distributed's types first)

ProcessGroupXnic = _C.ProcessGroupXnic
pick_device = _C.pick_device


def _create(store, rank, size, timeout):
    # An XNIC_DEVICE list without LOCAL_RANK is indexed by the process's
    # rank in the job, not by its rank in a subgroup (new_group).
    job_rank = dist.get_rank() if dist.is_initialized() else rank
    return _C.create(store, rank, size, timeout, job_rank)


if "XNIC" not in dist.Backend._plugins:
    dist.Backend.register_backend("xnic", _create)
