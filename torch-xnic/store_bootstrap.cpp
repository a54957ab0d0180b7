// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The libxniccoll bootstrap over the c10d Store that torch gives a process
// group (TCPStore under torchrun or env://): the ranks swap their QP
// numbers, node ids and buffer addresses through it, so the backend needs
// no port or address of its own. Only connection details go through the
// store; tensor data moves over xnic.
#include <cerrno>
#include <cstring>
#include <string>

#include "xnic_coll.h"
#include "xnic_pg.hpp"

namespace xnic_torch {
namespace {

struct StoreBootstrap {
  struct xnic_bootstrap bs;  // first: coll hands us this pointer back
  c10::intrusive_ptr<c10d::Store> store;
  std::string prefix;
  int rank;
  int nranks;
  uint64_t round;
  std::string error;
};

StoreBootstrap* fromBs(struct xnic_bootstrap* bs) {
  return reinterpret_cast<StoreBootstrap*>(bs);
}

// Called from C: no exception may leave.
int storeAllgather(struct xnic_bootstrap* bs, const void* mine, void* all,
                   size_t len, int timeout_ms) {
  StoreBootstrap* sb = fromBs(bs);
  std::string base = sb->prefix + "/" + std::to_string(sb->round++) + "/";
  try {
    const uint8_t* m = static_cast<const uint8_t*>(mine);
    sb->store->set(base + std::to_string(sb->rank),
                   std::vector<uint8_t>(m, m + len));
    for (int r = 0; r < sb->nranks; r++) {
      std::string key = base + std::to_string(r);
      sb->store->wait({key}, std::chrono::milliseconds(timeout_ms));
      std::vector<uint8_t> v = sb->store->get(key);
      if (v.size() != len) {
        sb->error = "store bootstrap: rank " + std::to_string(r) + " sent " +
                    std::to_string(v.size()) + " bytes, expected " +
                    std::to_string(len);
        return -EPROTO;
      }
      std::memcpy(static_cast<uint8_t*>(all) + (size_t)r * len, v.data(),
                  len);
    }
  } catch (const std::exception& e) {
    sb->error = std::string("store bootstrap: ") + e.what();
    return std::strstr(e.what(), "imeout") ? -ETIMEDOUT : -EIO;
  } catch (...) {
    sb->error = "store bootstrap: unknown exception";
    return -EIO;
  }
  return 0;
}

void storeClose(struct xnic_bootstrap* bs) {
  delete fromBs(bs);
}

const struct xnic_bootstrap_ops storeOps = {storeAllgather, storeClose};

}  // namespace

struct xnic_bootstrap* storeBootstrapCreate(
    const c10::intrusive_ptr<c10d::Store>& store, const std::string& prefix,
    int rank, int nranks) {
  StoreBootstrap* sb = new StoreBootstrap();
  sb->bs.ops = &storeOps;
  sb->store = store;
  sb->prefix = prefix;
  sb->rank = rank;
  sb->nranks = nranks;
  sb->round = 0;
  return &sb->bs;
}

std::string storeBootstrapError(struct xnic_bootstrap* bs) {
  return fromBs(bs)->error;
}

}  // namespace xnic_torch
