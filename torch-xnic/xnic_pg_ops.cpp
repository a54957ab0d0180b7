// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// ProcessGroupXnic: the collectives DDP does not use, built on the
// all-reduce and broadcast of xnic_pg.cpp. Correct for every dtype, and
// slower than they could be (each moves more bytes than it must):
//   reduce_scatter, _reduce_scatter_base  all-reduce of all inputs, keep ours
//   gather                                 every rank's tensor to every rank
//   scatter                                the root broadcasts all parts
//   alltoall, alltoall_base                every rank broadcasts its input
// Their arguments are checked like the others' (descriptor exchange):
// mismatches fail on every rank with the same message.
#include <algorithm>
#include <numeric>

#include <ATen/MemoryOverlap.h>
#include <c10/util/accumulate.h>

#include "xnic_coll.h"
#include "xnic_pg.hpp"

namespace xnic_torch {
namespace {

// "" when every tensor of @ts is usable and like @like (count, type);
// @written: the collective writes into them (badTensor()).
std::string badList(const std::vector<at::Tensor>& ts, const at::Tensor& like,
                    const char* what, bool written) {
  for (const auto& t : ts) {
    std::string b = badTensor(t, written);
    if (!b.empty())
      return b;
    if (t.numel() != like.numel() || t.scalar_type() != like.scalar_type())
      return std::string(what) + " of " + std::to_string(t.numel()) + " " +
             c10::toString(t.scalar_type()) + " where " +
             std::to_string(like.numel()) + " " +
             c10::toString(like.scalar_type()) + " are expected";
  }
  return "";
}

std::string wantCount(const char* what, size_t got, size_t want) {
  if (got == want)
    return "";
  return std::string(what) + ": " + std::to_string(got) + " tensors, " +
         std::to_string(want) + " expected";
}

}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupXnic::reduce_scatter(
    std::vector<at::Tensor>& outputs,
    std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  Desc d = describe(c10d::OpType::REDUCE_SCATTER, outputs, 0, true);
  c10d::ReduceOp op = opts.reduceOp;
  d.op = (int)op;
  if (d.localError.empty())
    d.localError = wantCount("reduce_scatter inputs", inputs.size(), 1);
  if (d.localError.empty())
    d.localError =
        wantCount("reduce_scatter input list", inputs[0].size(), size_);
  if (d.localError.empty())
    d.localError = badList(inputs[0], outputs[0], "an input", false);
  if (d.localError.empty() && !opSupported(op, outputs[0], &d.localError))
    d.localError = "xnic does not support " + d.localError;
  Job job;
  if (d.localError.empty()) {
    at::Tensor out = outputs[0];
    std::vector<at::Tensor> ins = inputs[0];
    job = [this, out, ins, op](struct xnic_comm* comm, uint64_t) mutable {
      at::Tensor flat = at::empty({size_, out.numel()}, out.options());
      for (int r = 0; r < size_; r++)
        flat.select(0, r).copy_(ins[r].reshape({-1}));
      at::Tensor all = flat.view({-1});
      allreduceNow(comm, all, op);
      out.copy_(flat.select(0, rank_).view(out.sizes()));
    };
  }
  return enqueue(c10d::OpType::REDUCE_SCATTER, outputs, d, job);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupXnic::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input,
    const c10d::ReduceScatterOptions& opts) {
  std::vector<at::Tensor> outs{output};
  Desc d = describe(c10d::OpType::_REDUCE_SCATTER_BASE, outs, 0, true);
  c10d::ReduceOp op = opts.reduceOp;
  d.op = (int)op;
  if (d.localError.empty())
    d.localError = badTensor(input, false);
  if (d.localError.empty() &&
      (input.numel() != output.numel() * size_ ||
       input.scalar_type() != output.scalar_type()))
    d.localError = "_reduce_scatter_base needs an input of " +
                   std::to_string(output.numel() * size_) + " " +
                   c10::toString(output.scalar_type()) + ", got " +
                   std::to_string(input.numel()) + " " +
                   c10::toString(input.scalar_type());
  if (d.localError.empty() && !opSupported(op, output, &d.localError))
    d.localError = "xnic does not support " + d.localError;
  Job job;
  if (d.localError.empty()) {
    at::Tensor out = output, in = input;
    job = [this, out, in, op](struct xnic_comm* comm, uint64_t) mutable {
      at::Tensor all = in.reshape({-1}).clone();
      allreduceNow(comm, all, op);
      out.copy_(all.view({size_, -1}).select(0, rank_).view(out.sizes()));
    };
  }
  return enqueue(c10d::OpType::_REDUCE_SCATTER_BASE, outs, d, job);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupXnic::gather(
    std::vector<std::vector<at::Tensor>>& outputs,
    std::vector<at::Tensor>& inputs, const c10d::GatherOptions& opts) {
  int root = (int)opts.rootRank;
  Desc d = describe(c10d::OpType::GATHER, inputs, root, false);
  bool isRoot = rank_ == root;
  if (d.localError.empty() && isRoot) {
    d.localError = wantCount("gather outputs", outputs.size(), 1);
    if (d.localError.empty())
      d.localError = wantCount("gather output list", outputs[0].size(), size_);
    if (d.localError.empty())
      d.localError = badList(outputs[0], inputs[0], "an output", true);
  } else if (d.localError.empty() && !outputs.empty() &&
             !(outputs.size() == 1 && outputs[0].empty())) {
    d.localError = "gather: only the root (rank " + std::to_string(root) +
                   ") takes output tensors";
  }
  Job job;
  std::vector<at::Tensor> outs;
  if (d.localError.empty()) {
    if (isRoot)
      outs = outputs[0];
    at::Tensor in = inputs[0];
    job = [this, in, outs, isRoot](struct xnic_comm* comm, uint64_t) mutable {
      at::Tensor flat = at::empty({size_, in.numel()}, in.options());
      gatherNow(comm, in.contiguous(), flat);
      for (int r = 0; isRoot && r < size_; r++)
        outs[r].copy_(flat.select(0, r).view(outs[r].sizes()));
    };
  }
  return enqueue(c10d::OpType::GATHER, outs, d, job);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupXnic::scatter(
    std::vector<at::Tensor>& outputs,
    std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ScatterOptions& opts) {
  int root = (int)opts.rootRank;
  Desc d = describe(c10d::OpType::SCATTER, outputs, root, true);
  bool isRoot = rank_ == root;
  if (d.localError.empty() && isRoot) {
    d.localError = wantCount("scatter inputs", inputs.size(), 1);
    if (d.localError.empty())
      d.localError = wantCount("scatter input list", inputs[0].size(), size_);
    if (d.localError.empty())
      d.localError = badList(inputs[0], outputs[0], "an input", false);
  } else if (d.localError.empty() && !inputs.empty() &&
             !(inputs.size() == 1 && inputs[0].empty())) {
    d.localError = "scatter: only the root (rank " + std::to_string(root) +
                   ") gives input tensors";
  }
  Job job;
  if (d.localError.empty()) {
    at::Tensor out = outputs[0];
    std::vector<at::Tensor> ins;
    if (isRoot)
      ins = inputs[0];
    job = [this, out, ins, root, isRoot](struct xnic_comm* comm,
                                         uint64_t) mutable {
      at::Tensor flat = at::empty({size_, out.numel()}, out.options());
      for (int r = 0; isRoot && r < size_; r++)
        flat.select(0, r).copy_(ins[r].reshape({-1}));
      check(comm,
            xnic_broadcast(comm, flat.data_ptr(),
                           (size_t)flat.numel() * flat.element_size(), root),
            "broadcast");
      out.copy_(flat.select(0, rank_).view(out.sizes()));
    };
  }
  return enqueue(c10d::OpType::SCATTER, outputs, d, job);
}

// Rows of @in (rows x @row elements, contiguous) go to the ranks in
// @inSplits' counts; @out receives @outSplits[r] rows from rank r, in
// rank order. Every rank first learns every rank's splits (so all agree
// on what is wrong, if anything), then broadcasts its whole input.
void ProcessGroupXnic::allToAllNow(struct xnic_comm* comm, at::Tensor in,
                                   at::Tensor out, int64_t row,
                                   const std::vector<int64_t>& inSplits,
                                   const std::vector<int64_t>& outSplits) {
  at::Tensor mine = at::empty({2 * size_}, at::kLong);
  auto m = mine.accessor<int64_t, 1>();
  for (int r = 0; r < size_; r++) {
    m[r] = inSplits[r];
    m[size_ + r] = outSplits[r];
  }
  at::Tensor all = at::empty({size_, 2 * size_}, at::kLong);
  gatherNow(comm, mine, all);
  auto s = all.accessor<int64_t, 2>();
  for (int a = 0; a < size_; a++)
    for (int b = 0; b < size_; b++)
      if (s[a][b] != s[b][size_ + a])
        throw std::runtime_error(
            "alltoall: rank " + std::to_string(a) + " sends " +
            std::to_string(s[a][b]) + " rows to rank " + std::to_string(b) +
            ", which expects " + std::to_string(s[b][size_ + a]));
  int64_t at_out = 0;
  for (int r = 0; r < size_; r++) {
    int64_t rows = 0, before = 0;
    for (int b = 0; b < size_; b++) {
      if (b == rank_)
        before = rows;
      rows += s[r][b];
    }
    at::Tensor buf = r == rank_ ? in : at::empty({rows, row}, in.options());
    check(comm,
          xnic_broadcast(comm, buf.data_ptr(),
                         (size_t)(rows * row) * buf.element_size(), r),
          "broadcast");
    out.narrow(0, at_out, s[r][rank_]).copy_(
        buf.narrow(0, before, s[r][rank_]));
    at_out += s[r][rank_];
  }
}

c10::intrusive_ptr<c10d::Work> ProcessGroupXnic::alltoall_base(
    at::Tensor& output, at::Tensor& input, std::vector<int64_t>& outSplits,
    std::vector<int64_t>& inSplits, const c10d::AllToAllOptions&) {
  std::vector<at::Tensor> ins{input};
  Desc d = describe(c10d::OpType::ALLTOALL_BASE, ins, 0, false);
  if (d.localError.empty())
    d.localError = badTensor(output, true);
  // Elements of a row (dimension 0's), even of a tensor of no rows.
  auto rowOf = [](const at::Tensor& t) {
    return c10::multiply_integers(t.sizes().begin() + 1, t.sizes().end());
  };
  int64_t inRows = input.dim() ? input.size(0) : 0;
  int64_t outRows = output.dim() ? output.size(0) : 0;
  int64_t row = input.dim() ? rowOf(input) : 0;
  if (d.localError.empty() &&
      (output.scalar_type() != input.scalar_type() || !input.dim() ||
       !output.dim() || rowOf(output) != row))
    d.localError = "alltoall_base needs input and output of one type, "
                   "split along dimension 0 into rows of the same size";
  // The ranks' row counts may differ (allToAllNow checks them), their
  // row sizes not.
  d.count = d.localError.empty() ? (uint64_t)row : 0;
  auto splits = [&](std::vector<int64_t>& sp, int64_t rows,
                    const char* what) {
    if (sp.empty()) {
      if (rows % size_)
        return std::string(what) + " of " + std::to_string(rows) +
               " rows does not split evenly over " + std::to_string(size_) +
               " ranks";
      sp.assign(size_, rows / size_);
    }
    if ((int)sp.size() != size_ ||
        std::accumulate(sp.begin(), sp.end(), (int64_t)0) != rows ||
        std::any_of(sp.begin(), sp.end(), [](int64_t v) { return v < 0; }))
      return std::string(what) + " splits do not add up to its " +
             std::to_string(rows) + " rows over " + std::to_string(size_) +
             " ranks";
    return std::string();
  };
  std::vector<int64_t> is = inSplits, os = outSplits;
  if (d.localError.empty())
    d.localError = splits(is, inRows, "the input");
  if (d.localError.empty())
    d.localError = splits(os, outRows, "the output");
  Job job;
  if (d.localError.empty()) {
    at::Tensor in = input, out = output;
    job = [this, in, out, row, is, os](struct xnic_comm* comm,
                                       uint64_t) mutable {
      at::Tensor o = out.is_contiguous() ? out : out.contiguous();
      // Rows land in the output before this rank sends its input: an
      // input that is the output, or overlaps it, is sent from a copy.
      at::Tensor i = in.contiguous();
      if (at::get_overlap_status(i, o) != at::MemOverlapStatus::No)
        i = i.clone();
      allToAllNow(comm, i.view({in.size(0), row}), o.view({o.size(0), row}),
                  row, is, os);
      if (!o.is_same(out))
        out.copy_(o);
    };
  }
  return enqueue(c10d::OpType::ALLTOALL_BASE, {output}, d, job);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupXnic::alltoall(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllToAllOptions&) {
  Desc d{(int)c10d::OpType::ALLTOALL, 0, 0, 0, 0, ""};
  d.localError = wantCount("alltoall inputs", inputs.size(), size_);
  if (d.localError.empty())
    d.localError = wantCount("alltoall outputs", outputs.size(), size_);
  for (const auto* list : {&inputs, &outputs})
    for (const auto& t : *list)
      if (d.localError.empty()) {
        d.localError = badTensor(t, list == &outputs);
        if (d.localError.empty() && t.scalar_type() !=
                                        inputs[0].scalar_type())
          d.localError = "alltoall needs tensors of one type";
      }
  if (d.localError.empty())
    d.dtype = (int)inputs[0].scalar_type();
  Job job;
  if (d.localError.empty()) {
    std::vector<at::Tensor> ins = inputs, outs = outputs;
    job = [this, ins, outs](struct xnic_comm* comm, uint64_t) mutable {
      std::vector<int64_t> is, os;
      std::vector<at::Tensor> flat;
      for (const auto& t : ins) {
        is.push_back(t.numel());
        flat.push_back(t.reshape({-1}));
      }
      for (const auto& t : outs)
        os.push_back(t.numel());
      at::Tensor in = at::cat(flat).view({-1, 1});
      at::Tensor out = at::empty(
          {std::accumulate(os.begin(), os.end(), (int64_t)0), 1},
          in.options());
      allToAllNow(comm, in, out, 1, is, os);
      int64_t at0 = 0;
      for (auto& t : outs) {
        t.copy_(out.narrow(0, at0, t.numel()).view(t.sizes()));
        at0 += t.numel();
      }
    };
  }
  return enqueue(c10d::OpType::ALLTOALL, outputs, d, job);
}

}  // namespace xnic_torch
