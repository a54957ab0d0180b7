// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - the doorbell file of a user context (uapi/xnic-abi.h, rule D1 and
 * XNIC_DB_RING).
 *
 * The wakeup syscall of rule D1 is one ioctl on a file of the context's
 * own, which names the QP by its doorbell slot. The same wakeup as a
 * POST_SEND command with no work requests goes through ib_core's uverbs
 * dispatcher: header and command copies, an allocation, the QP handle's
 * lookup and a response copy, about a tenth of an 8 B message's one-way
 * time under QEMU TCG.
 *
 * Lifetime: the file reaches its context through @uctx, under @lock;
 * dealloc_ucontext clears it (xnic_db_close()) and drops the reference the
 * context held, the process drops its own with close(). A doorbell holds a
 * reference to its QP while it runs the requester: destroy_qp waits for it,
 * and the context and the device outlive their QPs. The file holds the
 * module (fops owner), as any open file of a driver does: `rdma link
 * delete` still removes a device at once (its doorbells then fail with
 * -ENODEV), but `rmmod xnic` fails ("in use") while any process keeps a
 * doorbell file open (also a copy a fork() inherited).
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "xnic.h"
#include "verbs.h"
#include "engine.h"

/**
 * struct xnic_db_file - private data of a doorbell file
 * @lock: guards @uctx
 * @uctx: the context, NULL once it is gone
 */
struct xnic_db_file {
	spinlock_t lock;	/* guards uctx */
	struct xnic_ucontext *uctx;
};

/* The context's QP in doorbell slot @slot, referenced; NULL if none. */
static struct xnic_qp *xnic_db_qp(struct xnic_db_file *db, unsigned long slot,
				  int *err)
{
	struct xnic_qp *qp = NULL;

	spin_lock(&db->lock);
	if (!db->uctx) {
		*err = -ENODEV;
	} else {
		qp = xnic_uctx_qp_get(db->uctx, slot);
		*err = qp ? 0 : -EINVAL;
	}
	spin_unlock(&db->lock);
	return qp;
}

static long xnic_db_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	struct xnic_qp *qp;
	int err;

	if (cmd != XNIC_DB_RING)
		return -ENOTTY;
	if (arg >= XNIC_MAX_QP_PER_CTX)
		return -EINVAL;
	qp = xnic_db_qp(file->private_data, arg, &err);
	if (!qp)
		return err;
	xnic_engine_post_send(qp->xdev, qp);
	xnic_qp_put(qp);
	return 0;
}

static int xnic_db_release(struct inode *inode, struct file *file)
{
	kfree(file->private_data);
	return 0;
}

static const struct file_operations xnic_db_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = xnic_db_ioctl,
	/* The argument is a number, never a pointer. */
	.compat_ioctl = xnic_db_ioctl,
	.release = xnic_db_release,
	.llseek = noop_llseek,
};

/**
 * xnic_db_open() - make the doorbell file of a new context
 * @uctx: the context; its QP table is initialised
 *
 * The file and a descriptor are reserved, not yet visible to the process:
 * xnic_db_publish() installs them once nothing can fail any more, or
 * xnic_db_abort() drops them.
 *
 * Context: process context (alloc_ucontext), may sleep.
 * Return: the descriptor, or -errno (-EMFILE, -ENOMEM).
 */
int xnic_db_open(struct xnic_ucontext *uctx)
{
	struct xnic_db_file *db;
	struct file *file;
	int fd;

	db = kzalloc(sizeof(*db), GFP_KERNEL);
	if (!db)
		return -ENOMEM;
	spin_lock_init(&db->lock);
	db->uctx = uctx;
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		kfree(db);
		return fd;
	}
	file = anon_inode_getfile("[xnic-doorbell]", &xnic_db_fops, db,
				  O_RDWR | O_CLOEXEC);
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		kfree(db);
		return PTR_ERR(file);
	}
	uctx->db_file = file;
	uctx->db_fd = fd;
	return fd;
}

/**
 * xnic_db_publish() - give the process the doorbell file of its context
 * @uctx: the context, from a successful xnic_db_open()
 *
 * The context keeps a reference to the file, the descriptor the other.
 *
 * Context: process context, the process that opened the context.
 */
void xnic_db_publish(struct xnic_ucontext *uctx)
{
	fd_install(uctx->db_fd, get_file(uctx->db_file));
}

/**
 * xnic_db_abort() - drop an unpublished doorbell file
 * @uctx: the context, from a successful xnic_db_open()
 *
 * Context: process context, the process that opened the context.
 */
void xnic_db_abort(struct xnic_ucontext *uctx)
{
	put_unused_fd(uctx->db_fd);
	fput(uctx->db_file);
	uctx->db_file = NULL;
}

/**
 * xnic_db_close() - detach a context's doorbell file, if it has one
 * @uctx: the context being deallocated (every QP of it destroyed)
 *
 * Doorbells after this fail with -ENODEV; the file lives on while the
 * process keeps its descriptor.
 *
 * Context: process context.
 */
void xnic_db_close(struct xnic_ucontext *uctx)
{
	struct xnic_db_file *db;

	if (!uctx->db_file)
		return;
	db = uctx->db_file->private_data;
	spin_lock(&db->lock);
	db->uctx = NULL;
	spin_unlock(&db->lock);
	fput(uctx->db_file);
	uctx->db_file = NULL;
}
