// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libxnic - a registration cache: MRs kept registered after their use and
 * handed out again for memory they cover, for as long as the kernel says
 * the mapping of their range is unchanged. Each cached MR is registered
 * with a watch slot of the context page (XNIC_REG_MR_REQ_WATCH); the
 * kernel sets the slot's mr_stale byte when the range is unmapped,
 * remapped or otherwise changed, and a stale MR is never handed out
 * again. Without XNIC_CAP_MR_WATCH (an older module) nothing is cached.
 *
 * Entries live in one array, searched linearly: a cache holds at most a
 * few hundred MRs, and a search of them costs less than one registration.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "priv.h"

struct xnic_mr_cache_entry {
	struct xnic_mr *mr;
	unsigned int slot;
	unsigned int users;
	uint64_t used;		/* cache tick of the last get: LRU order */
};

/**
 * struct xnic_mr_cache - see xnic_mr_cache_create()
 * @pd: the PD its MRs belong to
 * @lock: guards everything below
 * @max_entries: entries kept at most (0: no caching)
 * @max_bytes: registered bytes kept at most
 * @bytes: bytes the entries register
 * @n: entries in @e
 * @tick: counts gets (LRU)
 * @e: the entries, @max_entries long
 * @stats: what xnic_mr_cache_stats() returns
 */
struct xnic_mr_cache {
	struct xnic_pd *pd;
	pthread_mutex_t lock;
	unsigned int max_entries;
	size_t max_bytes;
	size_t bytes;
	unsigned int n;
	uint64_t tick;
	struct xnic_mr_cache_entry *e;
	struct xnic_mr_cache_stats stats;
};

static int xnic_slot_get(struct xnic_ctx *ctx)
{
	int w, slot = -ENOSPC;

	pthread_mutex_lock(&ctx->lock);
	for (w = 0; w < XNIC_MR_WATCH_SLOTS / 64; w++) {
		if (~ctx->watch_used[w]) {
			int b = __builtin_ctzll(~ctx->watch_used[w]);

			ctx->watch_used[w] |= 1ULL << b;
			slot = w * 64 + b;
			break;
		}
	}
	pthread_mutex_unlock(&ctx->lock);
	return slot;
}

static void xnic_slot_put(struct xnic_ctx *ctx, unsigned int slot)
{
	pthread_mutex_lock(&ctx->lock);
	ctx->watch_used[slot / 64] &= ~(1ULL << (slot % 64));
	pthread_mutex_unlock(&ctx->lock);
}

static bool xnic_entry_stale(struct xnic_mr_cache *c,
			     const struct xnic_mr_cache_entry *e)
{
	return __atomic_load_n(&c->pd->ctx->page->mr_stale[e->slot],
			       __ATOMIC_ACQUIRE);
}

/* Deregister entry @i (unused) and fill its place with the last one. */
static void xnic_entry_drop(struct xnic_mr_cache *c, unsigned int i)
{
	struct xnic_mr_cache_entry *e = &c->e[i];

	c->bytes -= e->mr->length;
	/* A failed DEREG (device gone) leaves the MR watching its slot. */
	if (!xnic_dereg_mr(e->mr))
		xnic_slot_put(c->pd->ctx, e->slot);
	c->e[i] = c->e[--c->n];
}

/* Drop the least recently used unused entry; false if all are in use. */
static bool xnic_evict_one(struct xnic_mr_cache *c)
{
	unsigned int i, lru = c->n;

	for (i = 0; i < c->n; i++)
		if (!c->e[i].users && (lru == c->n ||
				       c->e[i].used < c->e[lru].used))
			lru = i;
	if (lru == c->n)
		return false;
	xnic_entry_drop(c, lru);
	c->stats.evicted++;
	return true;
}

int xnic_mr_cache_create(struct xnic_pd *pd, unsigned int max_entries,
			 size_t max_bytes, struct xnic_mr_cache **cachep)
{
	struct xnic_mr_cache *c;

	if (max_entries > XNIC_MR_WATCH_SLOTS)
		return -EINVAL;
	if (!(pd->ctx->caps & XNIC_CAP_MR_WATCH))
		max_entries = 0;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (max_entries) {
		c->e = calloc(max_entries, sizeof(*c->e));
		if (!c->e) {
			free(c);
			return -ENOMEM;
		}
	}
	c->pd = pd;
	c->max_entries = max_entries;
	c->max_bytes = max_bytes;
	pthread_mutex_init(&c->lock, NULL);
	*cachep = c;
	return 0;
}

/* Entry index of a usable cached MR covering the range, or c->n. */
static unsigned int xnic_lookup(struct xnic_mr_cache *c, uintptr_t addr,
				size_t length, unsigned int access)
{
	unsigned int i = 0;

	while (i < c->n) {
		struct xnic_mr_cache_entry *e = &c->e[i];
		uintptr_t start = (uintptr_t)e->mr->addr;

		if (xnic_entry_stale(c, e)) {
			if (!e->users) {
				xnic_entry_drop(c, i);
				c->stats.stale++;
				continue;	/* i now holds another entry */
			}
		} else if (addr >= start && length <= e->mr->length &&
			   addr - start <= e->mr->length - length &&
			   (e->mr->access & access) == access) {
			return i;
		}
		i++;
	}
	return c->n;
}

/*
 * Whether unpinning cached MRs can make room for a registration of
 * [@addr, @addr + @length): not when its own pages are more than
 * RLIMIT_MEMLOCK allows. ib_umem_get() fails with -ENOMEM when the pages
 * the process pins would exceed that limit, unless it has CAP_IPC_LOCK, in
 * which case the limit is not why it failed.
 */
static bool xnic_memlock_could_fit(void *addr, size_t length)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t first = (uintptr_t)addr & ~(page - 1);
	size_t bytes = (uintptr_t)addr + length - first;
	struct rlimit rl;

	return getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	       (bytes + page - 1) / page <= rl.rlim_cur / page;
}

/* Register a new entry; -ENOSPC when the cache cannot take it. */
static int xnic_insert(struct xnic_mr_cache *c, void *addr, size_t length,
		       unsigned int access, struct xnic_mr **mrp)
{
	struct xnic_mr_cache_entry *e;
	int slot, err;

	if (length > c->max_bytes)
		return -ENOSPC;
	while (c->n == c->max_entries || c->bytes + length > c->max_bytes)
		if (!xnic_evict_one(c))
			return -ENOSPC;
	slot = xnic_slot_get(c->pd->ctx);
	if (slot < 0)
		return slot;
	err = xnic_reg_mr_watched(c->pd, addr, length, access, slot, mrp);
	/* Out of pinnable memory (RLIMIT_MEMLOCK): unpin what waits. */
	if (err == -ENOMEM && xnic_memlock_could_fit(addr, length))
		while (err == -ENOMEM && xnic_evict_one(c))
			err = xnic_reg_mr_watched(c->pd, addr, length, access,
						  slot, mrp);
	if (err) {
		xnic_slot_put(c->pd->ctx, slot);
		return err;
	}
	e = &c->e[c->n++];
	e->mr = *mrp;
	e->slot = slot;
	e->users = 1;
	e->used = c->tick;
	c->bytes += length;
	return 0;
}

int xnic_mr_cache_get(struct xnic_mr_cache *c, void *addr, size_t length,
		      unsigned int access, struct xnic_mr **mrp)
{
	unsigned int i;
	int err;

	if (!length)
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	c->tick++;
	i = xnic_lookup(c, (uintptr_t)addr, length, access);
	if (i < c->n) {
		c->e[i].users++;
		c->e[i].used = c->tick;
		c->stats.hits++;
		*mrp = c->e[i].mr;
		pthread_mutex_unlock(&c->lock);
		return 0;
	}
	c->stats.misses++;
	err = xnic_insert(c, addr, length, access, mrp);
	if (err == -ENOSPC) {	/* all in use, or too big: not cached */
		c->stats.uncached++;
		err = xnic_reg_mr(c->pd, addr, length, access, mrp);
	}
	pthread_mutex_unlock(&c->lock);
	return err;
}

void xnic_mr_cache_put(struct xnic_mr_cache *c, struct xnic_mr *mr)
{
	unsigned int i;

	pthread_mutex_lock(&c->lock);
	for (i = 0; i < c->n && c->e[i].mr != mr; i++)
		;
	if (i == c->n)
		xnic_dereg_mr(mr);
	else if (!--c->e[i].users && xnic_entry_stale(c, &c->e[i])) {
		xnic_entry_drop(c, i);
		c->stats.stale++;
	}
	pthread_mutex_unlock(&c->lock);
}

void xnic_mr_cache_stats(struct xnic_mr_cache *c,
			 struct xnic_mr_cache_stats *stats)
{
	pthread_mutex_lock(&c->lock);
	*stats = c->stats;
	stats->entries = c->n;
	stats->bytes = c->bytes;
	pthread_mutex_unlock(&c->lock);
}

int xnic_mr_cache_destroy(struct xnic_mr_cache *c)
{
	unsigned int i;

	pthread_mutex_lock(&c->lock);
	for (i = 0; i < c->n; i++) {
		if (c->e[i].users) {
			pthread_mutex_unlock(&c->lock);
			return -EBUSY;
		}
	}
	while (c->n)
		xnic_entry_drop(c, c->n - 1);
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_destroy(&c->lock);
	free(c->e);
	free(c);
	return 0;
}
