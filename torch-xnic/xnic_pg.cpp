// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// ProcessGroupXnic: the collectives, their checks and their streams
// (xnic_pg.hpp describes the design, README the use).
#include <Python.h>
#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <system_error>

#include <ATen/MemoryOverlap.h>
#include <c10/core/InferenceMode.h>

#include "xnic.h"
#include "xnic_coll.h"
#include "xnic_pg.hpp"

namespace xnic_torch {
namespace {

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int envInt(const char* name, int def, int lo, int hi) {
  const char* v = std::getenv(name);
  if (!v || !*v)
    return def;
  char* end;
  long n = std::strtol(v, &end, 10);
  TORCH_CHECK(!*end && n >= lo && n <= hi, "xnic: ", name, "=", v,
              " is not an integer in ", lo, "..", hi);
  return (int)n;
}

// The buffer libxniccoll reduces @t in: @t itself when contiguous and
// aligned to its element size (xnic_allreduce() refuses other buffers,
// on this rank only: the others would wait out the timeout), else a
// contiguous copy (torch allocates aligned). torch.frombuffer() at an
// odd offset, or a numpy array's view, makes tensors that are not.
at::Tensor collBuffer(const at::Tensor& t) {
  bool aligned = (uintptr_t)t.data_ptr() % t.element_size() == 0;
  return t.is_contiguous() && aligned ? t
                                      : t.clone(at::MemoryFormat::Contiguous);
}

// The libxniccoll type of a tensor that coll reduces natively, or -1.
int collDtype(const at::Tensor& t) {
  if (t.scalar_type() == at::kFloat)
    return XNIC_COLL_FLOAT32;
  if (t.scalar_type() == at::kBFloat16)
    return XNIC_COLL_BFLOAT16;
  return -1;
}

// Waits for @t to end, without the GIL if this thread holds it: @t may
// need it (a Work's Python callback; a tensor's last reference dropped).
// destroy_process_group() drops a group's last reference holding it.
void joinWithoutGil(std::thread& t) {
  if (!t.joinable())
    return;
  PyThreadState* ts = nullptr;
  if (Py_IsInitialized() && PyGILState_Check())
    ts = PyEval_SaveThread();
  t.join();
  if (ts)
    PyEval_RestoreThread(ts);
}

}  // namespace

// Throws the communicator's error, naming what failed.
void check(struct xnic_comm* comm, int err, const char* what) {
  if (err)
    throw std::runtime_error(std::string(what) + ": " + std::strerror(-err) +
                             ": " + xnic_comm_strerror(comm));
}

// Arguments a rank can check alone; "" when fine. Bad ones still take
// part in the descriptor exchange, so that every rank fails, not only
// this one, and nothing moves.
std::string badTensor(const at::Tensor& t, bool written) {
  if (!t.defined())
    return "an undefined tensor";
  if (!t.device().is_cpu())
    return "a tensor on " + t.device().str() + " (xnic takes CPU tensors)";
  if (t.is_sparse())
    return "a sparse tensor (xnic takes dense tensors)";
  if (t.layout() != at::kStrided)
    return "a tensor of layout " + c10::str(t.layout()) +
           " (xnic takes dense, strided tensors)";
  if (t.is_quantized())
    return "a quantized tensor (xnic takes unquantized ones)";
  // Torch's in-place operations refuse it too (assert_no_internal_overlap);
  // the copy of the result into it would fail after the data moved.
  if (written && at::has_internal_overlap(t) == at::MemOverlap::Yes)
    return "a tensor the collective writes into whose elements share "
           "memory (a dimension of stride 0, as expand() makes; clone() it "
           "first)";
  return "";
}

// ------------------------------ Work -------------------------------

WorkXnic::WorkXnic(int rank, c10d::OpType type,
                   std::vector<at::Tensor> outputs)
    : c10d::Work(rank, type),
      outputs_(std::move(outputs)),
      future_(c10::make_intrusive<c10::ivalue::Future>(
          c10::ListType::create(c10::TensorType::get()))) {
  // The future's first callback completes the Work too, as soon as the
  // future is (before the callers' callbacks): c10d::Work::wait(timeout)
  // waits for that. The future completes while its collective is queued
  // or completing (complete(), or a caller's set_result() before it),
  // when the group or the completer holds the Work: `this` outlives the
  // callback.
  future_->addCallback(
      [this](c10::ivalue::Future& f) { finish(f.exception_ptr()); });
}

bool WorkXnic::isCompleted() {
  return future_->completed();
}

bool WorkXnic::isSuccess() const {
  return future_->completed() && !future_->hasError();
}

std::exception_ptr WorkXnic::exception() const {
  return future_->completed() && future_->hasError() ? future_->exception_ptr()
                                                     : nullptr;
}

std::vector<at::Tensor> WorkXnic::result() {
  return outputs_;
}

c10::intrusive_ptr<c10::ivalue::Future> WorkXnic::getFuture() {
  return future_;
}

void WorkXnic::complete(std::exception_ptr err) {
  if (err)
    future_->setError(err);
  else
    future_->markCompleted(c10::IValue(outputs_));
}

// ---------------------------- completion ---------------------------

// Works to complete, in call order (the progress thread hands them over
// so), and the threads that complete them. One completion runs at a
// time, so callbacks run, and the collectives they issue are enqueued,
// in call order on every rank. One whose thread has slept kStuck (a
// callback waiting for a later collective, as PowerSGD's do), not one
// computing, is left to itself: the next starts beside it, on an idle
// thread or a new one. Shared with its threads, which outlive the group.
class ProcessGroupXnic::Completer {
 public:
  static constexpr int64_t kStuck = 10 * 1000 * 1000;  // ns
  static constexpr size_t kMaxThreads = 64;

  void push(c10::intrusive_ptr<WorkXnic> work, std::exception_ptr err,
            const std::shared_ptr<Completer>& self) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.emplace_back(std::move(work), err);
      if (!threads_.empty() || tryStartLocked(self)) {
        cv_.notify_one();
        return;
      }
    }
    // No thread could be made (RLIMIT_NPROC, a pids cgroup): complete
    // here, on the progress thread, rather than never.
    for (;;) {
      std::unique_lock<std::mutex> lock(mutex_);
      if (queue_.empty() || !threads_.empty())
        return;
      auto w = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      completeOne(w);
    }
  }

  // Whether completions wait: the progress thread then calls grow() at
  // least every millisecond.
  bool pending() {
    std::lock_guard<std::mutex> lock(mutex_);
    return !queue_.empty();
  }

  // Lets the next completion start if the running one's thread has
  // slept kStuck (sampled at most every millisecond).
  void grow(const std::shared_ptr<Completer>& self) {
    std::lock_guard<std::mutex> lock(mutex_);
    int64_t t = nowNs();
    if (queue_.empty() || !active_ || t - sampled_ < 1000 * 1000)
      return;
    sampled_ = t;
    if (!sleeping(activeTid_)) {
      asleepSince_ = 0;
      return;
    }
    if (!asleepSince_)
      asleepSince_ = t;
    if (t - asleepSince_ <= kStuck)
      return;
    active_ = false;
    if (idle_)
      cv_.notify_one();
    else if (threads_.size() < kMaxThreads)
      tryStartLocked(self);
  }

  // No more work comes: a thread for each queued Work (so none waits on
  // another), then every thread ends once the queue is empty. Detached:
  // the caller may hold the GIL, or be one of them.
  void finish(const std::shared_ptr<Completer>& self) {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    for (size_t i = idle_; i < queue_.size(); i++)
      tryStartLocked(self);
    for (auto& t : threads_)
      t.detach();
    threads_.clear();
    cv_.notify_all();
  }

 private:
  using Entry =
      std::pair<c10::intrusive_ptr<WorkXnic>, std::exception_ptr>;

  bool tryStartLocked(const std::shared_ptr<Completer>& self) {
    try {
      threads_.emplace_back([self] { self->run(); });
      return true;
    } catch (const std::system_error& e) {
      TORCH_WARN_ONCE("xnic: no thread to complete collectives on: ",
                      e.what());
      return false;
    }
  }

  // Whether thread @tid sleeps or waits (state S or D in its stat).
  static bool sleeping(pid_t tid) {
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
    FILE* f = std::fopen(path, "r");
    if (!f)
      return false;
    size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
    std::fclose(f);
    buf[n] = 0;
    const char* p = std::strrchr(buf, ')');  // the name may hold any
    return p && (p[2] == 'S' || p[2] == 'D');
  }

  static void completeOne(Entry& w) {
    try {
      w.first->complete(w.second);
    } catch (const std::exception& e) {  // a callback's, not ours
      TORCH_WARN("xnic: a callback of a collective's future threw: ",
                 e.what());
    }
    w.first.reset();  // its callbacks' references, outside the lock
  }

  void run() {
    pid_t tid = (pid_t)syscall(SYS_gettid);
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      idle_++;
      cv_.wait(lock,
               [this] { return stop_ || (!queue_.empty() && !active_); });
      idle_--;
      if (queue_.empty())
        return;  // stopped
      auto w = std::move(queue_.front());
      queue_.pop_front();
      active_ = true;
      activeTid_ = tid;
      asleepSince_ = 0;
      lock.unlock();
      completeOne(w);
      lock.lock();
      if (active_ && activeTid_ == tid) {  // not left to itself meanwhile
        active_ = false;
        cv_.notify_one();
      }
    }
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Entry> queue_;
  std::vector<std::thread> threads_;
  size_t idle_ = 0;
  bool active_ = false;  // a completion runs, not left to itself
  pid_t activeTid_ = 0;  // its thread (the last one's while none runs)
  int64_t sampled_ = 0;  // grow() last read activeTid_'s state
  int64_t asleepSince_ = 0;  // activeTid_ seen asleep since (0: not)
  bool stop_ = false;
};

// ----------------------------- streams -----------------------------

// A collective from enqueue to completion. Only the progress thread
// touches it once submitted.
struct ProcessGroupXnic::Item {
  enum State { CHECKING, CHECKED, RUNNING, DONE };
  c10::intrusive_ptr<WorkXnic> work;
  Desc desc;
  uint64_t seq = 0;  // the call's number, the same on every rank
  int stream = 0;
  Job job;  // blocking (slow path, barrier): runs alone
  Start start;
  Finish finish;
  bool blocking = false;
  State state = CHECKING;
  std::vector<float> check;           // the descriptors, rank r's at r * 8
  struct xnic_coll_req* req = nullptr;  // the check's, then the data's
  std::exception_ptr err;  // DONE: how it ended
  bool inference = false;  // enqueued in InferenceMode (its tensors' kind)
  int64_t enqueued = 0;
  int64_t started = 0;
};

std::string pickDevice(int rank) {
  const char* env = std::getenv("XNIC_DEVICE");
  if (env && *env) {
    std::vector<std::string> names;
    std::stringstream ss(env);
    std::string n;
    while (std::getline(ss, n, ','))
      names.push_back(n);
    if (names.size() == 1)
      return names[0];
    const char* lr = std::getenv("LOCAL_RANK");
    char* end = nullptr;
    long i = lr && *lr ? std::strtol(lr, &end, 10) : rank;
    TORCH_CHECK(!end || !*end, "xnic: LOCAL_RANK=", lr,
                " is not an integer (it indexes XNIC_DEVICE=", env, ")");
    TORCH_CHECK(i >= 0 && i < (long)names.size(), "xnic: XNIC_DEVICE=", env,
                " has no entry for local rank ", i);
    return names[i];
  }
  std::vector<std::string> found;
  if (DIR* d = opendir("/sys/class/infiniband")) {
    while (struct dirent* e = readdir(d)) {
      struct xnic_ctx* ctx;
      if (e->d_name[0] == '.' || xnic_open(e->d_name, &ctx))
        continue;
      xnic_close(ctx);
      found.push_back(e->d_name);
    }
    closedir(d);
  }
  TORCH_CHECK(!found.empty(),
              "xnic: this node has no usable xnic device (none in "
              "/sys/class/infiniband opens): create one (rdma link add NAME "
              "type xnic netdev DEV) or set XNIC_DEVICE");
  std::string all;
  for (const auto& f : found)
    all += " " + f;
  TORCH_CHECK(found.size() == 1, "xnic: this node sees several xnic devices (",
              all.substr(1), "): set XNIC_DEVICE to this rank's");
  return found[0];
}

ProcessGroupXnic::ProcessGroupXnic(
    const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
    std::chrono::milliseconds timeout, int deviceRank)
    : ProcessGroup(rank, size) {
  int nstreams = envInt("XNIC_TORCH_STREAMS", 3, 1, 8);
  long long tmo = timeout.count();
  int timeout_ms = tmo <= 0 ? 0 : tmo > (1LL << 30) ? (1 << 30) : (int)tmo;

  if (size > 1)
    device_ = pickDevice(deviceRank < 0 ? rank : deviceRank);
  // Communicator -1 checks the calls, 0..nstreams-1 move the data.
  for (int i = -1; i < nstreams; i++) {
    std::string name = i < 0 ? "check" : std::to_string(i);
    struct xnic_bootstrap* bs =
        storeBootstrapCreate(store, "xnic/" + name, rank, size);
    struct xnic_comm_cfg cfg;
    std::memset(&cfg, 0, sizeof(cfg));
    cfg.rank = rank;
    cfg.nranks = size;
    cfg.device = device_.c_str();
    cfg.bootstrap = bs;
    cfg.timeout_ms = timeout_ms;
    // The checks and stream 0 carry what is urgent: traffic class 0.
    cfg.tclass = i <= 0 ? XNIC_TCLASS_LATENCY : XNIC_TCLASS_BULK;
    if (i < 0)  // descriptors of 32 bytes a rank: a small scratch region
      cfg.chunk_bytes = 64 << 10;
    struct xnic_comm* comm;
    int err = xnic_comm_init(&comm, &cfg);
    std::string msg = xnic_comm_strerror(NULL);
    std::string bsmsg = storeBootstrapError(bs);
    xnic_bootstrap_close(bs);
    if (err) {
      for (auto* c : comms_)
        xnic_comm_destroy(c);
      comms_.clear();
      xnic_comm_destroy(checkComm_);
      TORCH_CHECK(false, "xnic: rank ", rank, " of ", size, " on device ",
                  device_, ": communicator ", name, " failed: ",
                  std::strerror(-err), ": ", msg,
                  bsmsg.empty() ? "" : " (", bsmsg, bsmsg.empty() ? "" : ")");
    }
    if (i >= 0) {
      comms_.push_back(comm);
      continue;
    }
    checkComm_ = comm;
    // A collective's stream follows from its number, so every rank must
    // open as many: ranks whose XNIC_TORCH_STREAMS differ fail here, with
    // the same message, instead of waiting for communicators some never
    // open (until the group's timeout, 30 min by default for new_group).
    std::vector<float> n((size_t)size, 0.0f);
    n[rank] = (float)nstreams;
    err = xnic_allreduce(comm, n.data(), n.data(), n.size(),
                         XNIC_COLL_FLOAT32, XNIC_COLL_SUM);
    std::string all;
    for (int r = 0; r < size && !err; r++)
      all += (r ? ", " : "") + std::to_string((int)n[r]);
    if (err || std::count(n.begin(), n.end(), n[0]) != size) {
      std::string why =
          err ? std::string("exchanging XNIC_TORCH_STREAMS: ") +
                    std::strerror(-err) + ": " + xnic_comm_strerror(comm)
              : "the ranks' XNIC_TORCH_STREAMS differ (it must be the same "
                "on every rank): " +
                    all + " (by rank)";
      xnic_comm_destroy(checkComm_);
      checkComm_ = nullptr;
      TORCH_CHECK(false, "xnic: rank ", rank, " of ", size, " on device ",
                  device_, ": ", why);
    }
  }
  completer_ = std::make_shared<Completer>();
  thread_ = std::thread([this] { progress(); });
  init();
}

ProcessGroupXnic::~ProcessGroupXnic() {
  shutdown();
}

void ProcessGroupXnic::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (shut_)
      return;
    shut_ = stop_ = true;
  }
  cv_.notify_all();
  joinWithoutGil(thread_);
  if (completer_)
    completer_->finish(completer_);
  for (auto*& c : comms_) {
    xnic_comm_destroy(c);
    c = nullptr;
  }
  xnic_comm_destroy(checkComm_);
  checkComm_ = nullptr;
}

std::vector<OpTimes> ProcessGroupXnic::takeOpTimes() {
  std::lock_guard<std::mutex> lock(timesMutex_);
  std::vector<OpTimes> out;
  out.swap(times_);
  return out;
}

// Stream 0 for a critical collective, else the bulk streams in turn.
// Every call takes its turn, critical or not, so a rank that marked one
// critical alone (refused by the check: the stream is in it) stays in
// step with the others for the next.
int ProcessGroupXnic::pickStream() {
  int n = (int)comms_.size();
  int bulk = n == 1 ? 0 : 1 + (int)(next_++ % (uint64_t)(n - 1));
  return critical_.exchange(false) ? 0 : bulk;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupXnic::submit(
    std::unique_ptr<Item> it) {
  auto work = it->work;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    TORCH_CHECK(!shut_, "xnic: the process group was shut down");
    it->seq = seq_++;
    if (it->work->retrieveOpType() == c10d::OpType::BARRIER) {
      critical_ = false;
      it->stream = 0;  // moves no data
    } else {
      it->stream = pickStream();
    }
    it->enqueued = nowNs();
    it->inference = c10::InferenceMode::is_enabled();
    incoming_.push_back(std::move(it));
  }
  cv_.notify_one();
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupXnic::enqueue(
    c10d::OpType type, std::vector<at::Tensor> outputs, const Desc& desc,
    Job job) {
  std::unique_ptr<Item> it(new Item());
  it->work = c10::make_intrusive<WorkXnic>(rank_, type, std::move(outputs));
  it->desc = desc;
  it->job = std::move(job);
  it->blocking = true;
  return submit(std::move(it));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupXnic::enqueueAsync(
    c10d::OpType type, std::vector<at::Tensor> outputs, const Desc& desc,
    Start start, Finish finish) {
  std::unique_ptr<Item> it(new Item());
  it->work = c10::make_intrusive<WorkXnic>(rank_, type, std::move(outputs));
  it->desc = desc;
  it->start = std::move(start);
  it->finish = std::move(finish);
  return submit(std::move(it));
}

void ProcessGroupXnic::done(Item& it, std::exception_ptr err) {
  if (it.req)
    xnic_coll_req_free(it.req);
  it.req = nullptr;
  it.state = Item::DONE;
  {
    std::lock_guard<std::mutex> lock(timesMutex_);
    // Bounded: a program that never reads them keeps the last 4096.
    if (times_.size() >= 4096)
      times_.erase(times_.begin(), times_.begin() + 2048);
    times_.push_back(
        {it.enqueued, it.started ? it.started : nowNs(), nowNs(), it.stream});
  }
  it.err = err;  // completed by progress() once every earlier one is
}

void ProcessGroupXnic::fail(Item& it, const std::string& msg) {
  done(it, std::make_exception_ptr(std::runtime_error(
               "xnic: " + c10d::opTypeToString(it.work->retrieveOpType()) +
               " #" + std::to_string(it.seq) + " on rank " +
               std::to_string(rank_) + " (stream " +
               std::to_string(it.stream) + ", device " + device_ + "): " +
               msg)));
}

// One collective's next step, if it can take one now; returns whether
// it did. @first: no earlier collective is unfinished; @mayStart: no
// earlier blocking one is, nor an earlier one of its stream unstarted.
bool ProcessGroupXnic::advance(Item& it, bool first, bool mayStart) {
  // Its tensors are written in the mode they were made in: an inference
  // tensor takes in-place writes only in InferenceMode.
  // (InferenceMode(false) would turn grad mode on: only when it was.)
  c10::optional<c10::InferenceMode> inference;
  if (it.inference)
    inference.emplace();
  int r;
  switch (it.state) {
    case Item::CHECKING:
      r = xnic_coll_test(it.req);
      if (!r)
        return false;
      xnic_coll_req_free(it.req);
      it.req = nullptr;
      if (r < 0) {
        fail(it, std::string("exchanging the call's arguments: ") +
                     std::strerror(-r) + ": " + xnic_comm_strerror(checkComm_));
        return true;
      }
      {
        std::string bad = checkResult(it);
        if (!bad.empty())
          fail(it, bad);
        else
          it.state = Item::CHECKED;
      }
      return true;
    case Item::CHECKED:
      if (it.blocking) {
        if (!first)
          return false;
        it.started = nowNs();
        try {
          if (it.job)
            it.job(comms_[it.stream], it.seq);
        } catch (const std::exception& e) {
          fail(it, e.what());
          return true;
        }
        done(it, nullptr);
        return true;
      }
      if (!mayStart)
        return false;
      it.started = nowNs();
      try {
        it.req = it.start(comms_[it.stream]);
      } catch (const std::exception& e) {
        fail(it, e.what());
        return true;
      }
      it.state = Item::RUNNING;
      return true;
    case Item::RUNNING:
      r = xnic_coll_test(it.req);
      if (!r)
        return false;
      if (r < 0) {
        fail(it, c10d::opTypeToString(it.work->retrieveOpType()) + ": " +
                     std::strerror(-r) + ": " +
                     xnic_comm_strerror(comms_[it.stream]));
        return true;
      }
      try {
        if (it.finish)
          it.finish();
      } catch (const std::exception& e) {
        fail(it, e.what());
        return true;
      }
      done(it, nullptr);
      return true;
    default:
      return false;
  }
}

// The progress thread: checks started in call order as collectives come
// in, each collective started once checked (see xnic_pg.hpp), every
// request in flight advanced by one xnic_coll_waitany().
void ProcessGroupXnic::progress() {
  // The results' copies into the caller's tensors are no autograd
  // operation (as gloo's are not): a parameter, or a view of one, takes
  // them as a plain tensor does.
  at::NoGradGuard noGrad;
  std::deque<std::unique_ptr<Item>> live;  // call order, unfinished
  std::vector<struct xnic_coll_req*> reqs;
  std::vector<char> unstarted(comms_.size());
  for (;;) {
    size_t known = live.size();
    {
      std::unique_lock<std::mutex> lock(mutex_);
      auto more = [this] { return stop_ || !incoming_.empty(); };
      if (live.empty() && completer_->pending())
        cv_.wait_for(lock, std::chrono::milliseconds(1), more);
      else if (live.empty())
        cv_.wait(lock, more);
      if (live.empty() && incoming_.empty() && stop_)
        return;  // stopped, and everything enqueued has finished
      for (; !incoming_.empty(); incoming_.pop_front())
        live.push_back(std::move(incoming_.front()));
    }
    completer_->grow(completer_);
    // Outside the lock: a failure completes the Work.
    for (size_t i = known; i < live.size(); i++)
      startCheck(*live[i]);
    bool moved = false, earlier = false, blockingBefore = false;
    std::fill(unstarted.begin(), unstarted.end(), 0);
    for (auto& it : live) {
      moved |= advance(*it, !earlier,
                       !blockingBefore && !unstarted[it->stream]);
      if (it->state == Item::DONE)
        continue;
      earlier = true;
      blockingBefore |= it->blocking;
      if (it->state != Item::RUNNING)
        unstarted[it->stream] = 1;
    }
    // Completed in call order, so that their callbacks run, and the
    // collectives those issue are enqueued, in the same order on every
    // rank whatever order the streams finished in.
    for (; !live.empty() && live.front()->state == Item::DONE;
         live.pop_front())
      completer_->push(live.front()->work, live.front()->err, completer_);
    if (moved || live.empty())
      continue;
    reqs.clear();
    for (auto& it : live)
      if (it->req)
        reqs.push_back(it->req);
    // Nothing moved: sleep until a request is done, at most 1 ms (so a
    // collective enqueued meanwhile starts its check soon).
    xnic_coll_waitany(reqs.data(), (int)reqs.size(), 1);
  }
}

// ----------------------------- checks ------------------------------

// Every rank contributes its descriptor at its own slot of a float32
// vector summed over the ranks: each value below 2^24, so exact.
void ProcessGroupXnic::startCheck(Item& it) {
  const Desc& d = it.desc;
  const int K = 8;
  const uint32_t M = (1U << 24) - 1;
  it.check.assign((size_t)size_ * K, 0.0f);
  float* mine = &it.check[(size_t)rank_ * K];
  mine[0] = (float)(d.localError.empty() ? d.kind + 1 : 0);
  mine[1] = (float)d.dtype;
  mine[2] = (float)d.op;
  mine[3] = (float)d.root;
  mine[4] = (float)(d.count & M);
  mine[5] = (float)((d.count >> 24) & M);
  mine[6] = (float)(it.seq & M);
  mine[7] = (float)(it.stream + 1);
  int err = xnic_allreduce_start(checkComm_, it.check.data(),
                                 it.check.data(), it.check.size(),
                                 XNIC_COLL_FLOAT32, XNIC_COLL_SUM, &it.req);
  if (err)
    fail(it, std::string("exchanging the call's arguments: ") +
                 std::strerror(-err) + ": " + xnic_comm_strerror(checkComm_));
}

// Why the exchanged descriptors forbid the call ("" when they match).
std::string ProcessGroupXnic::checkResult(const Item& it) {
  const int K = 8;
  const std::vector<float>& v = it.check;
  std::ostringstream who;
  bool differ = false;
  std::vector<int> badRanks;
  for (int r = 0; r < size_; r++) {
    const float* o = &v[(size_t)r * K];
    if (o[0] == 0)
      badRanks.push_back(r);
    if (std::memcmp(o, &v[0], K * sizeof(float)))
      differ = true;
    who << (r ? "; " : "") << "rank " << r << ": "
        << (o[0] == 0 ? std::string("bad arguments")
                      : c10d::opTypeToString((c10d::OpType)(o[0] - 1)))
        << " of " << (uint64_t)o[4] + ((uint64_t)o[5] << 24) << " "
        << c10::toString((c10::ScalarType)(int)o[1]) << " (op " << (int)o[2]
        << ", root " << (int)o[3] << ", call " << (uint64_t)o[6]
        << ", stream " << (int)o[7] - 1 << ")";
  }
  if (!it.desc.localError.empty())
    return "bad arguments: " + it.desc.localError;
  if (!badRanks.empty()) {
    std::string rs;
    for (int r : badRanks)
      rs += (rs.empty() ? "" : ", ") + std::to_string(r);
    return "rank(s) " + rs + " gave bad arguments (their error says which)";
  }
  if (differ)
    return "the ranks' calls do not match (every rank must make the same "
           "collectives in the same order, with tensors of the same size "
           "and type): " +
           who.str();
  return "";
}

// --------------------------- collectives ---------------------------

// Rank r's @in lands in row r of @flat (size x in.numel(), contiguous):
// one broadcast per rank.
void ProcessGroupXnic::gatherNow(struct xnic_comm* comm, const at::Tensor& in,
                                 at::Tensor& flat) {
  size_t bytes = (size_t)in.numel() * in.element_size();
  flat.select(0, rank_).copy_(in.reshape({-1}));
  for (int r = 0; r < size_; r++)
    check(comm,
          xnic_broadcast(comm, flat.select(0, r).data_ptr(), bytes, r),
          "broadcast");
}

// In place, on every rank the same result. float32 and bfloat16 sums run
// in coll; everything else gathers every rank's tensor and reduces it in
// rank order.
void ProcessGroupXnic::allreduceNow(struct xnic_comm* comm, at::Tensor& t,
                                    c10d::ReduceOp op) {
  at::Tensor c = collBuffer(t);
  int dt = collDtype(c);
  if (dt >= 0 && op == c10d::ReduceOp::SUM) {
    check(comm,
          xnic_allreduce(comm, c.data_ptr(), c.data_ptr(), (size_t)c.numel(),
                         dt, XNIC_COLL_SUM),
          "allreduce");
  } else {
    at::Tensor all = at::empty({size_, c.numel()}, c.options());
    gatherNow(comm, c, all);
    at::Tensor acc = all.select(0, 0).clone();
    for (int r = 1; r < size_; r++) {
      at::Tensor x = all.select(0, r);
      switch (op) {
        case c10d::ReduceOp::SUM:
          acc.add_(x);
          break;
        case c10d::ReduceOp::PRODUCT:
          acc.mul_(x);
          break;
        case c10d::ReduceOp::MIN:
          acc = at::minimum(acc, x);
          break;
        case c10d::ReduceOp::MAX:
          acc = at::maximum(acc, x);
          break;
        case c10d::ReduceOp::BAND:
          acc.bitwise_and_(x);
          break;
        case c10d::ReduceOp::BOR:
          acc.bitwise_or_(x);
          break;
        case c10d::ReduceOp::BXOR:
          acc.bitwise_xor_(x);
          break;
        default:
          throw std::runtime_error("reduce op not supported");
      }
    }
    c.copy_(acc.view(c.sizes()));
  }
  if (!c.is_same(t))
    t.copy_(c);
}

bool opSupported(c10d::ReduceOp op, const at::Tensor& t,
                        std::string* why) {
  switch (op) {
    case c10d::ReduceOp::SUM:
    case c10d::ReduceOp::PRODUCT:
    case c10d::ReduceOp::MIN:
    case c10d::ReduceOp::MAX:
      if (t.is_complex() && op != c10d::ReduceOp::SUM &&
          op != c10d::ReduceOp::PRODUCT) {
        *why = "MIN/MAX of complex tensors";
        return false;
      }
      return true;
    case c10d::ReduceOp::BAND:
    case c10d::ReduceOp::BOR:
    case c10d::ReduceOp::BXOR:
      if (at::isFloatingType(t.scalar_type()) || t.is_complex()) {
        *why = "bitwise reduce ops on floating-point tensors";
        return false;
      }
      return true;
    default:
      static const char* const names[] = {"SUM", "AVG", "PRODUCT", "MIN",
                                          "MAX", "BAND", "BOR", "BXOR",
                                          "PREMUL_SUM"};
      *why = "reduce op " +
             ((int)op < 9 ? std::string(names[(int)op])
                          : std::to_string((int)op)) +
             " (xnic, like gloo, has SUM, PRODUCT, MIN, MAX, BAND, BOR, "
             "BXOR; divide after a SUM for an average)";
      return false;
  }
}

ProcessGroupXnic::Desc ProcessGroupXnic::describe(
    c10d::OpType kind, const std::vector<at::Tensor>& tensors, int root,
    bool written) {
  Desc d{(int)kind, 0, 0, root, 0, ""};
  if (tensors.size() != 1) {
    d.localError = "expected one tensor, got " +
                   std::to_string(tensors.size()) +
                   " (xnic has one CPU device per rank)";
    return d;
  }
  d.localError = badTensor(tensors[0], written);
  if (d.localError.empty()) {
    d.dtype = (int)tensors[0].scalar_type();
    d.count = (uint64_t)tensors[0].numel();
  }
  if (root < 0 || root >= size_)
    d.localError = "root rank " + std::to_string(root) + " is not in 0.." +
                   std::to_string(size_ - 1);
  return d;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupXnic::allreduce(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceOptions& opts) {
  Desc d = describe(c10d::OpType::ALLREDUCE, tensors, 0, true);
  c10d::ReduceOp op = opts.reduceOp;
  d.op = (int)op;
  if (d.localError.empty() && !opSupported(op, tensors[0], &d.localError))
    d.localError = "xnic does not support " + d.localError;
  if (d.localError.empty() && collDtype(tensors[0]) >= 0 &&
      op == c10d::ReduceOp::SUM) {
    // The fast path: in place, non-blocking, in coll.
    at::Tensor t = tensors[0];
    at::Tensor c = collBuffer(t);
    int dt = collDtype(c);
    return enqueueAsync(
        c10d::OpType::ALLREDUCE, tensors, d,
        [c, dt](struct xnic_comm* comm) {
          struct xnic_coll_req* q;
          check(comm,
                xnic_allreduce_start(comm, c.data_ptr(), c.data_ptr(),
                                     (size_t)c.numel(), dt, XNIC_COLL_SUM,
                                     &q),
                "allreduce");
          return q;
        },
        [t, c]() mutable {
          if (!c.is_same(t))
            t.copy_(c);
        });
  }
  Job job;
  if (d.localError.empty()) {
    at::Tensor t = tensors[0];
    job = [this, t, op](struct xnic_comm* comm, uint64_t) mutable {
      allreduceNow(comm, t, op);
    };
  }
  return enqueue(c10d::OpType::ALLREDUCE, tensors, d, job);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupXnic::reduce(
    std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) {
  // An all-reduce into a copy; only the root keeps the result.
  Desc d =
      describe(c10d::OpType::REDUCE, tensors, (int)opts.rootRank, true);
  c10d::ReduceOp op = opts.reduceOp;
  d.op = (int)op;
  if (d.localError.empty() && !opSupported(op, tensors[0], &d.localError))
    d.localError = "xnic does not support " + d.localError;
  Job job;
  if (d.localError.empty()) {
    at::Tensor t = tensors[0];
    int root = (int)opts.rootRank;
    job = [this, t, op, root](struct xnic_comm* comm, uint64_t) mutable {
      at::Tensor c = t.clone();
      allreduceNow(comm, c, op);
      if (rank_ == root)
        t.copy_(c);
    };
  }
  return enqueue(c10d::OpType::REDUCE, tensors, d, job);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupXnic::broadcast(
    std::vector<at::Tensor>& tensors, const c10d::BroadcastOptions& opts) {
  int root = (int)opts.rootRank;
  Desc d = describe(c10d::OpType::BROADCAST, tensors, root, true);
  if (d.localError.empty() && opts.rootTensor != 0)
    d.localError = "rootTensor " + std::to_string(opts.rootTensor) +
                   " (one tensor per rank: it must be 0)";
  if (!d.localError.empty())
    return enqueue(c10d::OpType::BROADCAST, tensors, d, Job());
  at::Tensor t = tensors[0];
  at::Tensor c = t.is_contiguous() ? t : t.contiguous();
  return enqueueAsync(
      c10d::OpType::BROADCAST, tensors, d,
      [c, root](struct xnic_comm* comm) {
        struct xnic_coll_req* q;
        check(comm,
              xnic_broadcast_start(comm, c.data_ptr(),
                                   (size_t)c.numel() * c.element_size(),
                                   root, &q),
              "broadcast");
        return q;
      },
      [t, c]() mutable {
        if (!c.is_same(t))
          t.copy_(c);
      });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupXnic::allgather(
    std::vector<std::vector<at::Tensor>>& outputs,
    std::vector<at::Tensor>& inputs, const c10d::AllgatherOptions&) {
  Desc d = describe(c10d::OpType::ALLGATHER, inputs, 0, false);
  if (d.localError.empty()) {
    if (outputs.size() != 1 || (int)outputs[0].size() != size_) {
      d.localError = "allgather needs one list of " + std::to_string(size_) +
                     " output tensors";
    } else {
      for (const auto& o : outputs[0]) {
        std::string b = badTensor(o, true);
        if (b.empty() && (o.numel() != inputs[0].numel() ||
                          o.scalar_type() != inputs[0].scalar_type()))
          b = "an output tensor of " + std::to_string(o.numel()) + " " +
              c10::toString(o.scalar_type()) + " for an input of " +
              std::to_string(inputs[0].numel()) + " " +
              c10::toString(inputs[0].scalar_type());
        if (!b.empty()) {
          d.localError = b;
          break;
        }
      }
    }
  }
  Job job;
  std::vector<at::Tensor> outs;
  if (d.localError.empty()) {
    outs = outputs[0];
    at::Tensor in = inputs[0];
    job = [this, in, outs](struct xnic_comm* comm, uint64_t) mutable {
      at::Tensor flat = at::empty({size_, in.numel()}, in.options());
      gatherNow(comm, in.contiguous(), flat);
      for (int r = 0; r < size_; r++)
        outs[r].copy_(flat.select(0, r).view(outs[r].sizes()));
    };
  }
  return enqueue(c10d::OpType::ALLGATHER, outs, d, job);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupXnic::_allgather_base(
    at::Tensor& output, at::Tensor& input, const c10d::AllgatherOptions&) {
  std::vector<at::Tensor> inputs{input};
  Desc d = describe(c10d::OpType::_ALLGATHER_BASE, inputs, 0, false);
  if (d.localError.empty()) {
    d.localError = badTensor(output, true);
    if (d.localError.empty() &&
        (output.numel() != input.numel() * size_ ||
         output.scalar_type() != input.scalar_type() ||
         !output.is_contiguous()))
      d.localError = "_allgather_base needs a contiguous output of " +
                     std::to_string(input.numel() * size_) + " " +
                     c10::toString(input.scalar_type()) + ", got " +
                     std::to_string(output.numel()) + " " +
                     c10::toString(output.scalar_type()) +
                     (output.is_contiguous() ? "" : ", not contiguous");
  }
  Job job;
  if (d.localError.empty()) {
    at::Tensor in = input, out = output;
    job = [this, in, out](struct xnic_comm* comm, uint64_t) mutable {
      at::Tensor flat = out.view({size_, in.numel()});
      gatherNow(comm, in.contiguous(), flat);
    };
  }
  return enqueue(c10d::OpType::_ALLGATHER_BASE, {output}, d, job);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupXnic::barrier(
    const c10d::BarrierOptions&) {
  // The descriptor exchange is the barrier: it ends once every rank has
  // reached it; as a blocking item it runs after every earlier
  // collective has finished.
  Desc d{(int)c10d::OpType::BARRIER, 0, 0, 0, 0, ""};
  return enqueue(c10d::OpType::BARRIER, {}, d, Job());
}

}  // namespace xnic_torch
