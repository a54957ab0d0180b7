// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// ProcessGroupXnic - a c10d process group (PyTorch 1.13's third-party
// backend API) whose collectives run on libxniccoll over xnic devices.
//
// Streams: the group owns S communicators (XNIC_TORCH_STREAMS, default 3),
// each with its own QPs, scratch region and worker thread, so S
// collectives are in flight at once. Stream 0's QPs are on traffic class 0
// (latency: served first) and carry the collectives marked critical
// (setCritical(), used by the DDP comm hook for the bucket the next
// forward needs first); streams 1..S-1 are on class 1 (bulk) and take the
// other collectives round-robin. Every rank issues the same collectives in
// the same order, so every rank picks the same stream for each.
//
// Every collective first exchanges a short descriptor (kind, dtype, op,
// root, element count, per-stream sequence number) with a small
// all-reduce on its stream: ranks that disagree fail with the same clear
// error on every rank, and the communicator stays usable.
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
// collective's error. wait() rethrows that error.
class WorkXnic : public c10d::Work {
 public:
  WorkXnic(int rank, c10d::OpType type, std::vector<at::Tensor> outputs);
  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  std::vector<at::Tensor> result() override;
  bool wait(std::chrono::milliseconds timeout) override;
  void synchronize() override {}
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

  // One of @parts sub-jobs finished (with @err, or nullptr on success);
  // the last one completes the future.
  void partDone(std::exception_ptr err);
  void setParts(int parts) { parts_ = parts; }

 private:
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  std::mutex mutex_;
  std::atomic<int> parts_{1};
  std::exception_ptr firstError_;
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
  ProcessGroupXnic(
      const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
      std::chrono::milliseconds timeout);
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
  int streams() const { return (int)streams_.size(); }

  // Job: runs on a stream's worker thread with that stream's
  // communicator; throws on failure.
  using Job = std::function<void(struct xnic_comm*, uint64_t seq)>;

 private:
  struct Stream;
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

  c10::intrusive_ptr<c10d::Work> enqueue(
      c10d::OpType type, std::vector<at::Tensor> outputs, const Desc& desc,
      Job job);
  void run(Stream& s);
  int pickStream();
  Desc describe(c10d::OpType kind, const std::vector<at::Tensor>& tensors,
                int root);
  void checkDesc(struct xnic_comm* comm, const Desc& d, uint64_t seq);
  void allreduceNow(struct xnic_comm* comm, at::Tensor& t,
                    c10d::ReduceOp op);
  void gatherNow(struct xnic_comm* comm, const at::Tensor& in,
                 at::Tensor& flat);
  void allToAllNow(struct xnic_comm* comm, at::Tensor in, at::Tensor out,
                   int64_t row, const std::vector<int64_t>& inSplits,
                   const std::vector<int64_t>& outSplits);

  std::string device_;
  std::vector<std::unique_ptr<Stream>> streams_;
  std::atomic<bool> critical_{false};
  bool shut_ = false;
  uint64_t next_ = 0;  // round-robin over the bulk streams
  std::mutex enqueueMutex_;
  std::mutex timesMutex_;
  std::vector<OpTimes> times_;
};

// Throws the communicator's error (a negative errno @err), naming @what.
void check(struct xnic_comm* comm, int err, const char* what);
// Why a tensor cannot take part ("" when it can).
std::string badTensor(const at::Tensor& t);
// Whether xnic can do @op on tensors like @t; if not, *why says what.
bool opSupported(c10d::ReduceOp op, const at::Tensor& t, std::string* why);

// This rank's device: $XNIC_DEVICE (a name, or a comma-separated list
// indexed by $LOCAL_RANK), else the one xnic device this node sees.
std::string pickDevice(int rank);

}  // namespace xnic_torch
