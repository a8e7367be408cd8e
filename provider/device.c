/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Device discovery: tell libibverbs which uverbs devices are softrdma ones
 * and register the provider when libibverbs dlopens us.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <softrdma-abi.h>

#include "softrdma.h"

/*
 * No match table entry fits our devices: the kernel reports no driver id,
 * there is no bus device to give a modalias, and the name is the user's
 * choice. So the module labels each device with hca_type, and libibverbs
 * calls this for every device it offers us. A device that reports a real
 * driver id (rxe, mlx5, ...) is someone else's.
 */
static bool srdma_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	char hca_type[64];

	if (sysfs_dev->driver_id != RDMA_DRIVER_UNKNOWN)
		return false;

	/* rxe and most drivers have no such file: not ours. */
	if (ibv_read_ibdev_sysfs_file(hca_type, sizeof(hca_type), sysfs_dev,
				      "hca_type") <= 0)
		return false;

	return strcmp(hca_type, SOFTRDMA_HCA_TYPE) == 0;
}

/*
 * libibverbs walks every provider's table when it offers a device that has
 * a driver id (rxe's, say), without checking for NULL: give it an empty
 * one so that walk ends at once.
 */
static const struct verbs_match_ent srdma_match_table[] = {
	{ .kind = VERBS_MATCH_SENTINEL },
};

static struct verbs_device *
srdma_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct srdma_device *sdev;

	sdev = calloc(1, sizeof(*sdev));
	if (!sdev)
		return NULL;

	sdev->abi_version = sysfs_dev->abi_ver;
	return &sdev->vdev;
}

static void srdma_uninit_device(struct verbs_device *vdev)
{
	free(to_sdev(&vdev->device));
}

static const struct verbs_device_ops srdma_device_ops = {
	.name			= "softrdma",
	.match_min_abi_version	= SOFTRDMA_ABI_MIN,
	.match_max_abi_version	= SOFTRDMA_ABI_VERSION,
	.match_table		= srdma_match_table,
	.match_device		= srdma_match_device,
	.alloc_device		= srdma_alloc_device,
	.uninit_device		= srdma_uninit_device,
	.alloc_context		= srdma_alloc_context,
	.import_context		= srdma_import_context,
};

static void __attribute__((constructor)) srdma_register(void)
{
	verbs_register_driver(&srdma_device_ops);
}
