// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vrnic driver namespace in the uverbs object tree (device interface
 * section 16.3): a global object VRNIC_OBJECT_DEVICE with the wake-up kick
 * of the idle handshake, a query of the caller's doorbell page layout and a
 * read of the device clock (ibv_query_rt_values_ex).
 */
#define UVERBS_MODULE_NAME vrnic_ib
#include <rdma/uverbs_ioctl.h>
#include <rdma/uverbs_named_ioctl.h>

#include "vrnic.h"

static int UVERBS_HANDLER(VRNIC_METHOD_KICK)(struct uverbs_attr_bundle *attrs)
{
	struct ib_ucontext *ibuc = ib_uverbs_get_ucontext(attrs);
	struct vrnic_dev *dev;

	if (IS_ERR(ibuc))
		return PTR_ERR(ibuc);
	dev = to_vdev(ibuc->device);
	if (vrnic_is_fatal(dev))
		return -EIO;
	vrnic_kick(dev, VRNIC_KICK_DATA_WAKEUP);
	return 0;
}

static int UVERBS_HANDLER(VRNIC_METHOD_QUERY_LAYOUT)(struct uverbs_attr_bundle *attrs)
{
	struct ib_ucontext *ibuc = ib_uverbs_get_ucontext(attrs);
	struct vrnic_layout layout = {};
	struct vrnic_ucontext *uc;
	struct vrnic_dev *dev;

	if (IS_ERR(ibuc))
		return PTR_ERR(ibuc);
	uc = to_vuc(ibuc);
	dev = to_vdev(ibuc->device);

	layout.version_major = dev->caps.version_major;
	layout.version_minor = dev->caps.version_minor;
	layout.abi_version = VRNIC_UVERBS_ABI_VERSION;
	layout.db_page_index = uc->db_page;
	layout.db_page_size = VRNIC_DB_PAGE_SIZE;
	layout.db_slots_per_page = VRNIC_DB_SLOTS_PER_PAGE;
	layout.db_first_obj_slot = VRNIC_DB_FIRST_OBJ_SLOT;
	layout.db_mmap_key = uc->db_mmap_key;
	return uverbs_copy_to_struct_or_zero(attrs,
					     VRNIC_ATTR_QUERY_LAYOUT_RESP,
					     &layout, sizeof(layout));
}

static int UVERBS_HANDLER(VRNIC_METHOD_QUERY_CLOCK)(struct uverbs_attr_bundle *attrs)
{
	struct ib_ucontext *ibuc = ib_uverbs_get_ucontext(attrs);
	struct vrnic_cmd_query_clock_resp resp = {};
	struct vrnic_clock clock = {};
	struct vrnic_dev *dev;
	int err;

	if (IS_ERR(ibuc))
		return PTR_ERR(ibuc);
	dev = to_vdev(ibuc->device);
	if (dev->caps.version_minor < 3)
		return -EOPNOTSUPP;
	err = vrnic_cmd_exec(dev, VRNIC_CMD_QUERY_CLOCK, NULL, 0,
			     &resp, sizeof(resp));
	if (err)
		return err;
	clock.now_ns = le64_to_cpu(resp.now_ns);
	return uverbs_copy_to_struct_or_zero(attrs, VRNIC_ATTR_QUERY_CLOCK_RESP,
					     &clock, sizeof(clock));
}

DECLARE_UVERBS_NAMED_METHOD(VRNIC_METHOD_KICK);

DECLARE_UVERBS_NAMED_METHOD(VRNIC_METHOD_QUERY_LAYOUT,
			    UVERBS_ATTR_PTR_OUT(VRNIC_ATTR_QUERY_LAYOUT_RESP,
						UVERBS_ATTR_STRUCT(struct vrnic_layout,
								   db_mmap_key),
						UA_MANDATORY));

DECLARE_UVERBS_NAMED_METHOD(VRNIC_METHOD_QUERY_CLOCK,
			    UVERBS_ATTR_PTR_OUT(VRNIC_ATTR_QUERY_CLOCK_RESP,
						UVERBS_ATTR_STRUCT(struct vrnic_clock,
								   now_ns),
						UA_MANDATORY));

DECLARE_UVERBS_GLOBAL_METHODS(VRNIC_OBJECT_DEVICE,
			      &UVERBS_METHOD(VRNIC_METHOD_KICK),
			      &UVERBS_METHOD(VRNIC_METHOD_QUERY_LAYOUT),
			      &UVERBS_METHOD(VRNIC_METHOD_QUERY_CLOCK));

const struct uapi_definition vrnic_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE_NAMED(VRNIC_OBJECT_DEVICE),
	{}
};
