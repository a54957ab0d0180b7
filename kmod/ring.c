// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - rings shared with userspace and their mmap entries.
 *
 * A ring is one xnic_vmalloc_user() allocation: a struct xnic_ring_hdr,
 * then 2^n fixed-size entries, rounded up to whole pages (uapi/xnic-abi.h).
 * Userspace maps it with the key of an rdma_user_mmap entry (siw model).
 *
 * Rings are charged to the memory cgroup of the process that creates them
 * (XNIC_GFP_ACCOUNT), so a cgroup's memory.max bounds what it can pin in
 * the kernel: past it, the verb fails with -ENOMEM.
 */
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "xnic.h"
#include "verbs.h"

/**
 * xnic_vmalloc_user() - zeroed memory userspace can map, charged to memcg
 * @size: bytes, at least 1; rounded up to whole pages
 *
 * Like vmalloc_user(), but every page (and the page array) is charged to
 * the calling task's memory cgroup (XNIC_GFP_ACCOUNT). vmalloc_user()
 * takes no gfp flags and __vmalloc_node_range() is not exported, so the
 * pages are allocated here and mapped with vmap(VM_USERMAP |
 * VM_MAP_PUT_PAGES): remap_vmalloc_range() accepts the area, and vfree()
 * frees (and uncharges) the pages and the array.
 *
 * Context: process context, may sleep.
 * Return: the memory, or NULL (out of memory, or over the cgroup's limit).
 */
void *xnic_vmalloc_user(size_t size)
{
	unsigned long i, n = PAGE_ALIGN(size) >> PAGE_SHIFT;
	struct page **pages;
	void *addr;

	if (!n || n > UINT_MAX)
		return NULL;
	pages = kvcalloc(n, sizeof(*pages), XNIC_GFP_ACCOUNT);
	if (!pages)
		return NULL;
	for (i = 0; i < n; i++) {
		pages[i] = alloc_page(XNIC_GFP_ACCOUNT | __GFP_ZERO);
		if (!pages[i])
			goto err;
	}
	addr = vmap(pages, n, VM_MAP | VM_USERMAP | VM_MAP_PUT_PAGES,
		    PAGE_KERNEL);
	if (addr)
		return addr;
err:
	while (i--)
		__free_page(pages[i]);
	kvfree(pages);
	return NULL;
}

/**
 * xnic_ring_alloc() - allocate a ring's shared memory
 * @ring: the ring, zeroed by the caller or freed before
 * @nr: entries, a power of two
 * @elem_size: bytes per entry
 *
 * The memory is zeroed: both indices start at 0 and no flag is set. It is
 * charged to the caller's memory cgroup.
 *
 * Context: process context, may sleep.
 * Return: 0; -EINVAL for a zero or non power of two @nr or @elem_size, or
 * an overflowing size; -ENOMEM.
 */
int xnic_ring_alloc(struct xnic_ring *ring, u32 nr, u32 elem_size)
{
	size_t size;

	BUILD_BUG_ON(sizeof(struct xnic_ring_hdr) != XNIC_RING_HDR_SIZE);

	if (!nr || !is_power_of_2(nr) || !elem_size)
		return -EINVAL;
	size = size_add(XNIC_RING_HDR_SIZE, size_mul(nr, elem_size));
	if (size == SIZE_MAX || size > U32_MAX - PAGE_SIZE)
		return -EINVAL;
	size = PAGE_ALIGN(size);

	ring->buf = xnic_vmalloc_user(size);
	if (!ring->buf)
		return -ENOMEM;
	ring->hdr = ring->buf;
	ring->entries = ring->buf + XNIC_RING_HDR_SIZE;
	ring->nr = nr;
	ring->elem_size = elem_size;
	ring->size = size;
	ring->kidx = 0;
	ring->mmap = NULL;
	return 0;
}

/**
 * xnic_ring_free() - release a ring
 * @ring: the ring; may be all zeroes (never allocated)
 *
 * Removes the mmap entry, which frees the memory once ib_core is done with
 * it, or frees the memory directly when the ring was never mapped. The
 * caller must no longer touch the ring's memory.
 *
 * Context: process context, may sleep.
 */
void xnic_ring_free(struct xnic_ring *ring)
{
	if (ring->mmap)
		rdma_user_mmap_entry_remove(ring->mmap);
	else
		vfree(ring->buf);
	memset(ring, 0, sizeof(*ring));
}

/**
 * xnic_mmap_insert() - make xnic_vmalloc_user() memory mappable by a process
 * @ibuc: the process's context
 * @address: xnic_vmalloc_user() memory, @size bytes
 * @size: bytes, a multiple of PAGE_SIZE
 * @key: set to the mmap(2) offset userspace must use
 *
 * On success the entry owns @address (see the top of this file).
 *
 * Context: process context, may sleep.
 * Return: the entry, or ERR_PTR(-ENOMEM); the caller still owns @address
 * on failure.
 */
struct rdma_user_mmap_entry *xnic_mmap_insert(struct ib_ucontext *ibuc,
					      void *address, size_t size,
					      u64 *key)
{
	struct xnic_mmap_entry *entry;
	int err;

	entry = kzalloc(sizeof(*entry), XNIC_GFP_ACCOUNT);
	if (!entry)
		return ERR_PTR(-ENOMEM);
	entry->address = address;
	err = rdma_user_mmap_entry_insert(ibuc, &entry->rdma_entry, size);
	if (err) {
		kfree(entry);
		return ERR_PTR(err);
	}
	*key = rdma_user_mmap_get_offset(&entry->rdma_entry);
	return &entry->rdma_entry;
}

/**
 * xnic_ring_map() - give a ring an mmap entry
 * @ring: an allocated ring without one
 * @ibuc: the context of the process that will map it
 * @key: set to the mmap(2) offset
 *
 * Context: process context, may sleep.
 * Return: 0 or -ENOMEM.
 */
int xnic_ring_map(struct xnic_ring *ring, struct ib_ucontext *ibuc, u64 *key)
{
	struct rdma_user_mmap_entry *entry;

	entry = xnic_mmap_insert(ibuc, ring->buf, ring->size, key);
	if (IS_ERR(entry))
		return PTR_ERR(entry);
	ring->mmap = entry;
	return 0;
}

/**
 * xnic_mmap_free() - ib_device_ops.mmap_free: release an mmap entry
 * @rdma_entry: the entry; its memory is no longer reachable by ib_core
 *
 * Context: process context.
 */
void xnic_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	struct xnic_mmap_entry *entry =
		container_of(rdma_entry, struct xnic_mmap_entry, rdma_entry);

	vfree(entry->address);
	kfree(entry);
}
