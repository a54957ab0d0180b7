// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The netlink fuzz targets' watch on libnl's attribute getters (linked
 * with -Wl,--wrap=nla_get_...): libnl is not instrumented, so a getter
 * that reads past its attribute would go unseen; these abort() instead.
 * A u8/u16/u32/u64 needs that many bytes, a string its NUL inside the
 * attribute: what the callers' policies must have checked.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/attr.h>

uint8_t __real_nla_get_u8(const struct nlattr *a);
uint16_t __real_nla_get_u16(const struct nlattr *a);
uint32_t __real_nla_get_u32(const struct nlattr *a);
uint64_t __real_nla_get_u64(const struct nlattr *a);
char *__real_nla_get_string(const struct nlattr *a);
uint8_t __wrap_nla_get_u8(const struct nlattr *a);
uint16_t __wrap_nla_get_u16(const struct nlattr *a);
uint32_t __wrap_nla_get_u32(const struct nlattr *a);
uint64_t __wrap_nla_get_u64(const struct nlattr *a);
char *__wrap_nla_get_string(const struct nlattr *a);

static void need(const struct nlattr *a, int n)
{
	if (nla_len(a) < n)
		abort();
}

uint8_t __wrap_nla_get_u8(const struct nlattr *a)
{
	need(a, 1);
	return __real_nla_get_u8(a);
}

uint16_t __wrap_nla_get_u16(const struct nlattr *a)
{
	need(a, 2);
	return __real_nla_get_u16(a);
}

uint32_t __wrap_nla_get_u32(const struct nlattr *a)
{
	need(a, 4);
	return __real_nla_get_u32(a);
}

uint64_t __wrap_nla_get_u64(const struct nlattr *a)
{
	need(a, 8);
	return __real_nla_get_u64(a);
}

char *__wrap_nla_get_string(const struct nlattr *a)
{
	need(a, 1);
	if (!memchr(nla_data(a), 0, (size_t)nla_len(a)))
		abort();
	return __real_nla_get_string(a);
}
