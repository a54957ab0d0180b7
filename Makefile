# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# xnic top-level Makefile. `make` builds the module, libuser, the tools and
# the selftests; `make check` runs every test; `make demo` the main job.
# Kernel objects are built by Kbuild (see ./Kbuild); everything else here.

VERSION		:= 0.1.0
PREFIX		?= /usr/local
DESTDIR		?=
LIBDIR		?= $(PREFIX)/lib
INCDIR		?= $(PREFIX)/include
BINDIR		?= $(PREFIX)/bin
MANDIR		?= $(PREFIX)/share/man

# Kernel build tree: KDIR=, else the running kernel's, else the newest
# installed one (this machine runs a kernel without headers: tests boot the
# installed Debian kernel under QEMU). Looked up while parsing, so on a
# first `make demo` it is still empty (`deps` installs the headers later):
# an empty KDIR is looked up again and exported only once found, so that the
# sub-makes of `demo` and `check` find the headers `deps` just installed.
KVER		?= $(shell uname -r)
ifeq ($(strip $(KDIR)),)
  ifneq ($(wildcard /lib/modules/$(KVER)/build/Makefile),)
    KDIR := /lib/modules/$(KVER)/build
  else
    KDIR := $(shell ls -d /lib/modules/*/build 2>/dev/null | sort -V | tail -n 1)
    ifneq ($(KDIR)$(XNIC_KDIR_NOTED),)
      $(info xnic: no build tree for running kernel $(KVER); using $(KDIR))
      export XNIC_KDIR_NOTED := 1
    endif
  endif
endif
ifneq ($(KDIR),)
  export KDIR
endif

# Files we take from Debian's linux-source-6.1 at build time (not copied).
KSRC_TAR	?= /usr/src/linux-source-6.1.tar.xz
KSRC		:= build/linux
KSRC_FILES	:= tools/testing/selftests/kselftest_harness.h \
		   tools/testing/selftests/kselftest.h \
		   scripts/checkpatch.pl scripts/spelling.txt \
		   scripts/const_structs.checkpatch

CC		?= cc
CFLAGS		?= -O2 -g
XCFLAGS		:= -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -I$(CURDIR)
export CC CFLAGS XCFLAGS VERSION

.PHONY: all module lib tools selftests ksrc check unit-check vm-check lint \
	checkpatch sparse w1 demo deps check-debug install install-module module-clean \
	dkms-check coll topo thermal fabric torch fresh-check fuzz soak examples man \
	install-user install-test demo-train clean help

all: module lib tools selftests coll topo thermal fabric torch examples man

help:
	@echo "targets: all module lib tools selftests coll topo thermal fabric torch examples man check check-debug fuzz soak lint demo demo-train deps install install-test dkms-check fresh-check clean"

deps:
	@tools/xnic-deps

module:
	@test -n "$(KDIR)" || { echo "xnic: no kernel build tree; run 'make deps' or set KDIR=" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

lib:
	$(MAKE) -C libuser

tools: lib
	$(MAKE) -C tools

coll: lib
	$(MAKE) -C coll
	$(MAKE) -C tools xnic-coll-rank

# Topology-aware rank mapping: libxnicmap and xnic-map (topo/README).
topo:
	$(MAKE) -C topo

# The member links' temperature reader xnic-tempd (thermal/README).
thermal:
	$(MAKE) -C thermal
examples: lib coll
	$(MAKE) -C examples

# man3 pages, one per public function, from the kernel-doc comments of
# the public headers (tools/xnic-man).
MAN_HDRS	:= libuser/xnic.h coll/xnic_coll.h
KDOC		:= $(KSRC)/scripts/kernel-doc
man: build/man/.stamp
build/man/.stamp: $(MAN_HDRS) tools/xnic-man $(KDOC)
	tools/xnic-man $(KDOC) build/man $(VERSION) $(MAN_HDRS)
	@touch $@

$(KDOC): $(KSRC_TAR)
	@mkdir -p $(KSRC)
	tar -xf $(KSRC_TAR) -C $(KSRC) --strip-components=1 \
		linux-source-6.1/scripts/kernel-doc
	@touch $@

# The c10d backend: built when torch's headers are installed, else skipped
# with a note (torch-xnic/Makefile).
torch: coll
	$(MAKE) -C torch-xnic

$(KSRC)/.stamp: $(KSRC_TAR)
	@mkdir -p $(KSRC)
	tar -xf $(KSRC_TAR) -C $(KSRC) --strip-components=1 \
		$(addprefix linux-source-6.1/,$(KSRC_FILES))
	@touch $@

# The libfabric provider: fabric/libxnic-fi.so
fabric: lib
	$(MAKE) -C fabric

ksrc: $(KSRC)/.stamp

selftests: ksrc lib topo
	$(MAKE) -C selftests

# `make check` and `make demo` are the README's two set-up commands: both
# first install missing Debian packages, then build (a sub-make, so that
# KDIR is found once the headers are there), JOBS at a time (default: one
# per CPU).
JOBS ?= $(shell nproc)
check: deps
	@$(MAKE) -s -j$(JOBS) all
	@selftests/check.sh

# Each fuzz target for FUZZ_RUNS executions (selftests/fuzz/README).
FUZZ_RUNS ?= 10000000
fuzz:
	@selftests/fuzz/run.sh --runs $(FUZZ_RUNS)

# The fault soak (tools/xnic-soak) in one boot of the test VM, SOAK_MIN
# minutes (default 20); not part of `make check`. SOAK_VM_ARGS go to
# tools/xnic-vm (Documentation/testing.rst: on the debug kernel).
SOAK_MIN ?= 20
soak: all
	tools/xnic-vm --timeout $$(($(SOAK_MIN) * 60 + 900)) $(SOAK_VM_ARGS) -- \
		tools/xnic-soak --minutes $(SOAK_MIN)

# The VM tests on a kernel with KASAN, kmemleak, lockdep and DEBUG_OBJECTS
# (tools/xnic-debug-kernel builds it once, an hour or more, cached in
# /var/cache/xnic-debug-kernel); any report fails. Not part of `make check`.
# CHECK_PROGS= runs only those programs.
check-debug: all
	@tools/xnic-deps --debug
	@selftests/check.sh --debug $(CHECK_PROGS)

# The programs cli_opts_test.sh runs (a host script) are built first.
unit-check: ksrc tools coll examples thermal
	$(MAKE) -C selftests unit
	@selftests/check.sh --unit-only

vm-check: all
	@selftests/check.sh --vm-only

lint: checkpatch sparse w1

checkpatch: ksrc
	perl $(KSRC)/scripts/checkpatch.pl --strict --no-tree --quiet \
		-f $(filter-out %.mod.c,$(wildcard kmod/*.c)) kmod/*.h uapi/*.h
	@echo "checkpatch: clean"

sparse:
	@out=$$($(MAKE) -s -C $(KDIR) M=$(CURDIR) C=2 modules 2>&1); \
	echo "$$out" | grep -E "warning|error" && { echo "sparse: not clean" >&2; exit 1; }; \
	echo "sparse: clean"

w1:
	@out=$$($(MAKE) -s -C $(KDIR) M=$(CURDIR) W=1 modules 2>&1 | grep -v "^Skipping BTF"); \
	echo "$$out" | grep -E "warning|error" && { echo "W=1: not clean" >&2; exit 1; }; \
	echo "W=1: clean"

# DEMO_ARGS: options of tools/xnic-demo, e.g. "--vms" or "--nodes 8 --json"
demo: deps
	@$(MAKE) -s -j$(JOBS) all
	@tools/xnic-demo $(DEMO_ARGS)

# DDP training over xnic vs gloo on 4 emulated nodes, a node killed and the
# job restarted from its checkpoint (tools/xnic-demo --train).
demo-train: deps
	@$(MAKE) -s -j$(JOBS) all
	@tools/xnic-demo --train $(DEMO_ARGS)

# xnic against rdma_rxe and memcpy in one VM boot; goals are reported.
.PHONY: bench
bench: all
	@tools/xnic-deps --bench
	@tools/xnic-bench

install: install-module install-user

# Everything but the module: libraries, headers, pkg-config files, tools,
# man pages.
install-user: lib tools coll topo thermal man
	$(MAKE) -C libuser install
	$(MAKE) -C tools install
	$(MAKE) -C coll install
	$(MAKE) -C topo install
	$(MAKE) -C thermal install
	$(MAKE) -C fabric install
	install -d $(DESTDIR)$(MANDIR)/man3
	cp -P build/man/*.3 $(DESTDIR)$(MANDIR)/man3/

# What a user of the installed tree does: `make install DESTDIR=`, then
# build the examples with pkg-config; every man page renders cleanly.
install-test: lib tools coll man
	@selftests/install_test.sh

module-clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean

install-module: module
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_PATH=$(DESTDIR) \
		INSTALL_MOD_DIR=updates modules_install

dkms-check:
	@tools/xnic-dkms-check $(VERSION)

# The README's `make demo` and `make check` on a fresh minimal Debian 12
# (a chroot holding a clone of HEAD); about an hour; needs root.
fresh-check:
	@tools/xnic-fresh-check

clean: module-clean
	$(MAKE) -C libuser clean
	$(MAKE) -C tools clean
	$(MAKE) -C coll clean
	$(MAKE) -C topo clean
	$(MAKE) -C thermal clean
	$(MAKE) -C fabric clean
	$(MAKE) -C torch-xnic clean
	$(MAKE) -C selftests clean
	$(MAKE) -C selftests/fuzz clean
	$(MAKE) -C examples clean
	rm -rf build
