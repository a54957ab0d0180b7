// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libxnic - device discovery through sysfs. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xnic.h"

#define SYS_IB		"/sys/class/infiniband"
#define SYS_UVERBS	"/sys/class/infiniband_verbs"

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int err = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		err = -EIO;
	else
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
	return err;
}

static int parse_guid(const char *s, uint64_t *guid)
{
	unsigned int a, b, c, d;

	if (sscanf(s, "%4x:%4x:%4x:%4x", &a, &b, &c, &d) != 4)
		return -EINVAL;
	*guid = (uint64_t)a << 48 | (uint64_t)b << 32 | (uint64_t)c << 16 | d;
	return 0;
}

int xnic_device_lookup(const char *name, struct xnic_device_info *info)
{
	char path[256], buf[XNIC_NAME_MAX];
	struct dirent *de;
	DIR *dir;
	int err;

	if (!name || !*name || strlen(name) >= XNIC_NAME_MAX ||
	    strchr(name, '/'))
		return -EINVAL;

	memset(info, 0, sizeof(*info));
	snprintf(path, sizeof(path), SYS_IB "/%s/node_guid", name);
	err = read_line(path, buf, sizeof(buf));
	if (err)
		return err == -ENOENT ? -ENODEV : err;
	err = parse_guid(buf, &info->node_guid);
	if (err)
		return err;
	snprintf(info->name, sizeof(info->name), "%s", name);

	dir = opendir(SYS_UVERBS);
	if (!dir)
		return -ENXIO;
	err = -ENXIO;
	while ((de = readdir(dir))) {
		if (strncmp(de->d_name, "uverbs", 6))
			continue;
		snprintf(path, sizeof(path), SYS_UVERBS "/%.64s/ibdev",
			 de->d_name);
		if (read_line(path, buf, sizeof(buf)) || strcmp(buf, name))
			continue;
		snprintf(path, sizeof(path), SYS_UVERBS "/%.64s/abi_version",
			 de->d_name);
		if (read_line(path, buf, sizeof(buf)))
			continue;
		info->abi_version = (unsigned int)strtoul(buf, NULL, 10);
		snprintf(info->uverbs, sizeof(info->uverbs),
			 "/dev/infiniband/%.40s", de->d_name);
		err = 0;
		break;
	}
	closedir(dir);
	return err;
}
