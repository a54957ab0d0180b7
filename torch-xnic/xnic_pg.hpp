// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// ProcessGroupXnic - a c10d process group (PyTorch 1.13's third-party
// backend API) whose collectives run on libxniccoll over xnic devices.
//
// Streams: the group owns S data communicators (XNIC_TORCH_STREAMS,
// default 3), each with its own QPs and scratch region, so S collectives
// are on the wire at once. Stream 0's QPs are on traffic class 0
// (latency: served first) and carry the collectives marked critical
// (setCritical(), used by the DDP comm hook for the bucket the next
// forward needs first); streams 1..S-1 are on class 1 (bulk) and take the
// other collectives round-robin. Every rank issues the same collectives in
// the same order, so every rank picks the same stream for each.
//
// Checks: every collective's descriptor (kind, dtype, op, root, element
// count, call number) is swapped with a small all-reduce on a communicator
// of its own (the check communicator, class 0) before the collective's
// data move: ranks that disagree fail with the same clear error on every
// rank, and the group stays usable. The checks run ahead of the data: a
// bucket's check is started when the bucket is enqueued, while earlier
// buckets are still on the wire, so the data streams carry only data.
//
// Completion: a Work's future runs its callbacks (DDP's, Python's) on a
// completer thread, never on the progress thread, so that a callback
// waiting for another collective (PowerSGD's hook does) does not stop the
// progress it waits for; a second completer starts when the first is
// stuck in a callback that long.
//
// Progress: one thread per group drives every communicator with
// libxniccoll's non-blocking calls (start, then waitany over everything in
// flight): a collective starts as soon as its check has passed and the
// collectives before it on its stream have started. The slow paths (other
// dtypes and ops, gathers, all-to-all: blocking calls) and barriers run
// alone, after every earlier collective and before any later one, so all
// ranks make the same blocking calls in the same order.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

struct xnic_comm;
struct xnic_coll_req;
struct xnic_bootstrap;

namespace xnic_torch {

// A bootstrap (coll/xnic_coll.h) whose all-gathers go through a c10d
// Store under keys "<prefix>/<round>/<rank>". Errors of the store become
// -ETIMEDOUT or -EIO; storeBootstrapError() has the store's message.
struct xnic_bootstrap *storeBootstrapCreate(
    const c10::intrusive_ptr<c10d::Store>& store, const std::string& prefix,
    int rank, int nranks);
std::string storeBootstrapError(struct xnic_bootstrap* bs);

// Completes through its future: a list of the output tensors, or the
// collective's error. wait(timeout) is c10d::Work's, as gloo's is (torch
// 1.13, Work.hpp): it waits for the future, at most @timeout unless that
// is kNoTimeout (0, Python's default), then rethrows the collective's
// error; past the timeout it throws "Operation timed out!" and the
// collective goes on (it ends when the other ranks join it, or fails
// after the group's timeout).
class WorkXnic : public c10d::Work {
 public:
  WorkXnic(int rank, c10d::OpType type, std::vector<at::Tensor> outputs);
  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  std::vector<at::Tensor> result() override;
  void synchronize() override {}
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

  // The collective finished: with @err, or nullptr on success.
  void complete(std::exception_ptr err);

 private:
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

// Timestamps of one collective, steady_clock nanoseconds (CLOCK_MONOTONIC,
// Python's time.monotonic_ns()).
struct OpTimes {
  int64_t enqueued;
  int64_t started;
  int64_t finished;
  int stream;
};

class ProcessGroupXnic : public c10d::ProcessGroup {
 public:
  // @deviceRank: the rank that picks this process's device (pickDevice):
  // its rank in the whole job, also for a subgroup; -1: @rank.
  ProcessGroupXnic(
      const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
      std::chrono::milliseconds timeout, int deviceRank = -1);
  ~ProcessGroupXnic() override;

  const std::string getBackendName() const override { return "xnic"; }

  c10::intrusive_ptr<c10d::Work> broadcast(
      std::vector<at::Tensor>& tensors,
      const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(
      std::vector<at::Tensor>& tensors,
      const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(
      std::vector<at::Tensor>& tensors,
      const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(
      std::vector<std::vector<at::Tensor>>& outputs,
      std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(
      at::Tensor& output, at::Tensor& input,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> barrier(
      const c10d::BarrierOptions& opts) override;
  // xnic_pg_ops.cpp: correct for every dtype, not fast.
  c10::intrusive_ptr<c10d::Work> reduce_scatter(
      std::vector<at::Tensor>& outputs,
      std::vector<std::vector<at::Tensor>>& inputs,
      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input,
      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(
      std::vector<std::vector<at::Tensor>>& outputs,
      std::vector<at::Tensor>& inputs,
      const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(
      std::vector<at::Tensor>& outputs,
      std::vector<std::vector<at::Tensor>>& inputs,
      const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(
      at::Tensor& output, at::Tensor& input,
      std::vector<int64_t>& outSplits, std::vector<int64_t>& inSplits,
      const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::AllToAllOptions& opts) override;

  // Finish the queued collectives, then free the communicators (waiting
  // for this rank's writes still in flight); later calls fail.
  void shutdown();
  // The next collective goes on stream 0 (traffic class 0).
  void setCritical() { critical_ = true; }
  // The timestamps of the collectives finished since the last call.
  std::vector<OpTimes> takeOpTimes();
  const std::string& device() const { return device_; }
  int streams() const { return (int)comms_.size(); }

  // Job: a blocking collective (slow paths), run on the progress thread
  // with its stream's communicator; @seq is the call's number. Throws on
  // failure.
  using Job = std::function<void(struct xnic_comm*, uint64_t seq)>;
  // Start: begins a collective on a communicator without blocking and
  // returns its request (throws on failure); Finish runs once it is done.
  using Start = std::function<struct xnic_coll_req*(struct xnic_comm*)>;
  using Finish = std::function<void()>;

 private:
  struct Item;
  // Descriptor of a collective checked across ranks before it runs;
  // @localError: why this rank's own arguments are bad ("" when fine).
  struct Desc {
    int kind;
    int dtype;
    int op;
    int root;
    uint64_t count;
    std::string localError;
  };

  // A blocking collective (@job; none for a barrier).
  c10::intrusive_ptr<c10d::Work> enqueue(
      c10d::OpType type, std::vector<at::Tensor> outputs, const Desc& desc,
      Job job);
  // A non-blocking one.
  c10::intrusive_ptr<c10d::Work> enqueueAsync(
      c10d::OpType type, std::vector<at::Tensor> outputs, const Desc& desc,
      Start start, Finish finish);
  c10::intrusive_ptr<c10d::Work> submit(std::unique_ptr<Item> it);
  void progress();
  bool advance(Item& it, bool first, bool mayStart);
  void startCheck(Item& it);
  std::string checkResult(const Item& it);
  void fail(Item& it, const std::string& msg);
  void done(Item& it, std::exception_ptr err);
  int pickStream();
  // @written: the collective writes into @tensors (badTensor()).
  Desc describe(c10d::OpType kind, const std::vector<at::Tensor>& tensors,
                int root, bool written);
  void allreduceNow(struct xnic_comm* comm, at::Tensor& t,
                    c10d::ReduceOp op);
  void gatherNow(struct xnic_comm* comm, const at::Tensor& in,
                 at::Tensor& flat);
  void allToAllNow(struct xnic_comm* comm, at::Tensor in, at::Tensor out,
                   int64_t row, const std::vector<int64_t>& inSplits,
                   const std::vector<int64_t>& outSplits);

  // Completes Works off the progress thread (xnic_pg.cpp).
  class Completer;

  std::string device_;
  std::shared_ptr<Completer> completer_;
  struct xnic_comm* checkComm_ = nullptr;
  std::vector<struct xnic_comm*> comms_;  // the data streams
  std::thread thread_;
  std::atomic<bool> critical_{false};
  // mutex_ guards next_, seq_, incoming_, stop_ (the thread is to end
  // once everything enqueued has finished) and shut_ (no more enqueues).
  uint64_t next_ = 0;  // round-robin over the bulk streams
  uint64_t seq_ = 0;   // collectives enqueued
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Item>> incoming_;
  bool stop_ = false;
  bool shut_ = false;
  std::mutex timesMutex_;
  std::vector<OpTimes> times_;
};

// Throws the communicator's error (a negative errno @err), naming @what.
void check(struct xnic_comm* comm, int err, const char* what);
// Why tensor @t cannot take part in a collective ("" when it can): xnic
// takes dense, strided, unquantized CPU tensors of any shape and strides;
// one it writes into (@written: an output, or in place) must not have
// elements that share memory (at::has_internal_overlap(): a dimension of
// stride 0 and size > 1, as expand() makes), the rule of torch's in-place
// operations.
std::string badTensor(const at::Tensor& t, bool written);
// Whether xnic can do @op on tensors like @t; if not, *why says what.
bool opSupported(c10d::ReduceOp op, const at::Tensor& t, std::string* why);

// This rank's device: $XNIC_DEVICE (a name, or a comma-separated list
// indexed by $LOCAL_RANK), else the one xnic device this node sees.
std::string pickDevice(int rank);

}  // namespace xnic_torch
