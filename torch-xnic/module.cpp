// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// xnic_torch._C: the Python face of ProcessGroupXnic. xnic_torch/__init__.py
// registers create() with torch.distributed as the backend "xnic".
#include <pybind11/chrono.h>
#include <torch/csrc/utils/pybind.h>

#include "xnic_pg.hpp"

namespace py = pybind11;
using xnic_torch::ProcessGroupXnic;

PYBIND11_MODULE(_C, m) {
  m.doc() = "c10d process group over xnic (libxniccoll)";
  py::class_<ProcessGroupXnic, c10d::ProcessGroup,
             c10::intrusive_ptr<ProcessGroupXnic>>(m, "ProcessGroupXnic")
      .def_property_readonly("device", &ProcessGroupXnic::device)
      .def_property_readonly("streams", &ProcessGroupXnic::streams)
      .def("_shutdown", &ProcessGroupXnic::shutdown,
           py::call_guard<py::gil_scoped_release>(),
           "Finish queued collectives and free the communicators.")
      .def("_set_critical", &ProcessGroupXnic::setCritical,
           "The next collective goes on stream 0 (traffic class 0).")
      .def(
          "_take_op_times",
          [](ProcessGroupXnic& pg) {
            py::list out;
            for (const auto& t : pg.takeOpTimes())
              out.append(
                  py::make_tuple(t.enqueued, t.started, t.finished, t.stream));
            return out;
          },
          "(enqueued, started, finished, stream) of the collectives done "
          "since the last call; nanoseconds of time.monotonic_ns()");
  m.def(
      "create",
      [](const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
         std::chrono::milliseconds timeout, int device_rank) {
        py::gil_scoped_release release;  // the store waits for the others
        return c10::make_intrusive<ProcessGroupXnic>(store, rank, size,
                                                     timeout, device_rank);
      },
      py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout"),
      py::arg("device_rank") = -1,
      "A ProcessGroupXnic: torch.distributed's creator (store, rank, size, "
      "timeout) for the backend 'xnic'; device_rank: the rank in the whole "
      "job that indexes an XNIC_DEVICE list without LOCAL_RANK (-1: rank).");
  m.def("pick_device", &xnic_torch::pickDevice, py::arg("rank") = 0,
        "This rank's xnic device ($XNIC_DEVICE or the node's only one).");
}
