// SPDX-License-Identifier: GPL-2.0
/*
 * The hw counters of counters.h.
 */
#include <stdio.h>

#include "counters.h"

int64_t hw_counter_at(const char *dev, const char *name)
{
	char path[512];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/ports/1/hw_counters/%.40s", dev,
		 name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

int64_t hw_counter(struct ibv_context *ctx, const char *name)
{
	return hw_counter_at(ctx->device->ibdev_path, name);
}

int64_t hw_counter_by_name(const char *ibdev, const char *name)
{
	char dev[256];

	snprintf(dev, sizeof(dev), "/sys/class/infiniband/%s", ibdev);
	return hw_counter_at(dev, name);
}
