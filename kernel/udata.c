// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vrnic: the udata of a verb, checked the same way by every verb.
 */
#include <rdma/uverbs_ioctl.h>

#include "vrnic.h"

/*
 * Copy a driver request from user space. A shorter request is zero-extended
 * (an older provider); a longer one must have only zero bytes beyond what
 * this driver knows. The caller checks comp_mask and reserved fields.
 */
int vrnic_udata_in(struct ib_udata *udata, void *cmd, size_t size)
{
	memset(cmd, 0, size);
	if (!udata || !udata->inlen)
		return 0;
	if (udata->inlen > size &&
	    !ib_is_udata_cleared(udata, size, udata->inlen - size))
		return -EINVAL;
	return ib_copy_from_udata(cmd, udata, min(size, udata->inlen));
}

/* A verb without a driver request: any input bytes must be zero. */
int vrnic_udata_no_input(struct ib_udata *udata)
{
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	return 0;
}

int vrnic_udata_out(struct ib_udata *udata, void *resp, size_t size)
{
	if (!udata || !udata->outlen)
		return 0;
	return ib_copy_to_udata(udata, resp, min(size, udata->outlen));
}
