#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# install_test.sh - the installed tree as a user meets it (runs on the
# host, no VM): `make install DESTDIR=$tmp` (libraries, headers, pkg-config
# files, man pages; not the module: INSTALL_MOD=0), then every example
# built out of the source tree against that install, with nothing but
# `pkg-config --cflags --libs` (PKG_CONFIG_SYSROOT_DIR pointing there),
# shared and static; and every man3 page renders with no warning
# (`groff -man -ww -z`, and `man -l`), one page per public function of
# libxnic.h and xnic_coll.h.
set -u
. "$(dirname "$0")/xt_tap.sh"
cd "$(dirname "$0")/.." || exit 1
top=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for t in pkg-config groff man; do
	command -v $t >/dev/null || skip_all "$t not installed"
done

echo "TAP version 13"
root=$tmp/root
make -s install-user DESTDIR="$root" PREFIX=/usr/local >"$tmp/install.log" 2>&1
rc=$?
((rc == 0)) || sed 's/^/# /' "$tmp/install.log"
check "make install-user DESTDIR= (make install without the module)" \
	test $rc -eq 0
pc=$root/usr/local/lib/pkgconfig
export PKG_CONFIG_PATH=$pc PKG_CONFIG_SYSROOT_DIR=$root
check "libxnic.pc and libxniccoll.pc installed" \
	test -f "$pc/libxnic.pc" -a -f "$pc/libxniccoll.pc"
check "pkg-config --exists libxnic libxniccoll" pkg-config --exists libxnic libxniccoll
check "pkg-config libxnic points into the install" \
	bash -c "pkg-config --cflags libxnic | grep -q -- '-I$root/usr/local/include'"

# Out of the tree: copies of the sources, no path back to it.
mkdir -p "$tmp/user"
cp examples/*.c examples/*.h "$tmp/user/"
cd "$tmp/user" || exit 1
for p in pingpong echo_server echo_client; do
	# shellcheck disable=SC2046 # pkg-config's words, split on purpose
	check "$p: cc \$(pkg-config --cflags --libs libxnic)" \
		cc -Wall -Wextra -Werror -o "$p" "$p.c" \
		$(pkg-config --cflags --libs libxnic)
done
# shellcheck disable=SC2046
check "allreduce: cc \$(pkg-config --cflags --libs libxniccoll)" \
	cc -Wall -Wextra -Werror -o allreduce allreduce.c \
	$(pkg-config --cflags --libs libxniccoll)
check "allreduce linked to the installed libxniccoll.so" \
	bash -c "LD_LIBRARY_PATH=$root/usr/local/lib ldd ./allreduce | grep -q '$root/usr/local/lib/libxniccoll.so'"
check "the built example runs (usage message, exit 2)" \
	bash -c "LD_LIBRARY_PATH=$root/usr/local/lib ./pingpong 2>/dev/null; test \$? -eq 2"
# shellcheck disable=SC2046
check "allreduce linked statically: --static --libs libxniccoll" \
	cc -static -o allreduce-static allreduce.c \
	$(pkg-config --static --cflags --libs libxniccoll)
cd "$top" || exit 1

# Man pages: one per public function, each renders cleanly.
man3=$root/usr/local/share/man/man3
want=$(sed -nE 's/^ \* ([a-z_0-9]+)\(\) - .*/\1/p' libuser/xnic.h \
	coll/xnic_coll.h | grep -v __ | sort)
have=$(cd "$man3" 2>/dev/null && ls -- *.3 | sed 's/\.3$//' | sort)
check "a man3 page per public function ($(echo "$want" | wc -l))" \
	test "$want" = "$have"
missing=$(comm -23 <(echo "$want") <(echo "$have"))
[[ -z $missing ]] || echo "# no page: $missing"
# Every function the headers declare has a kernel-doc comment (and so a
# page): names of the form xnic_*( in declarations.
decl=$(sed -nE 's/^(static inline )?[a-z].*[ *](xnic_[a-z_0-9]+)\(.*/\2/p' \
	libuser/xnic.h coll/xnic_coll.h | grep -v __ | sort -u)
check "every declared function is documented" \
	test -z "$(comm -23 <(echo "$decl") <(echo "$want"))"
undoc=$(comm -23 <(echo "$decl") <(echo "$want"))
[[ -z $undoc ]] || echo "# undocumented: $undoc"
bad=0
for p in "$man3"/*.3; do
	w=$(groff -man -ww -z "$p" 2>&1; MANWIDTH=80 man -l "$p" 2>&1 >/dev/null)
	if [[ -n $w ]]; then
		echo "# $(basename "$p"): $w"
		bad=$((bad + 1))
	fi
done
check "every page renders without a warning (groff -ww, man -l)" \
	test "$bad" -eq 0
tap_end
