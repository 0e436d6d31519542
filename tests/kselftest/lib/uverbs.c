// SPDX-License-Identifier: GPL-2.0
/* Raw uverbs: write() commands and ioctls on a cmd_fd, without libibverbs. */
#include "suite.h"

int su_uverbs_write(int fd, uint32_t command, void *cmd,
		    size_t cmd_len, size_t out_len)
{
	struct ib_uverbs_cmd_hdr *hdr = cmd;

	hdr->command = command;
	hdr->in_words = cmd_len / 4;
	hdr->out_words = out_len / 4;
	if (write(fd, cmd, cmd_len) != (ssize_t)cmd_len)
		return -errno;
	return 0;
}

int su_uverbs_index(void)
{
	char path[300], name[64];
	struct dirent *e;
	int idx = -1;
	DIR *d;

	d = opendir("/sys/class/infiniband_verbs");
	if (!d)
		return -1;
	while ((e = readdir(d)) && idx < 0) {
		if (strncmp(e->d_name, "uverbs", 6))
			continue;
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband_verbs/%s/ibdev", e->d_name);
		if (!su_read_line(path, name, sizeof(name)) &&
		    !strcmp(name, SU_DEV))
			idx = atoi(e->d_name + 6);
	}
	closedir(d);
	return idx;
}

int su_open_uverbs(void)
{
	char path[64];
	int idx = su_uverbs_index();

	if (idx < 0)
		return -1;
	snprintf(path, sizeof(path), "/dev/infiniband/uverbs%d", idx);
	return open(path, O_RDWR | O_CLOEXEC);
}

int su_get_context(int fd, const void *drv_in,
		   size_t drv_in_len,
		   struct ib_uverbs_get_context_resp *core,
		   struct vrnic_ibv_alloc_ucontext_resp *drv)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_get_context cmd;
		uint64_t drv[2];
	} c = {};
	struct {
		struct ib_uverbs_get_context_resp core;
		struct vrnic_ibv_alloc_ucontext_resp drv;
	} r = {};
	int err;

	if (drv_in_len > sizeof(c.drv))
		return -E2BIG;
	c.cmd.response = (uintptr_t)&r;
	if (drv_in_len)
		memcpy(c.drv, drv_in, drv_in_len);
	err = su_uverbs_write(fd, IB_USER_VERBS_CMD_GET_CONTEXT, &c,
			      sizeof(c.hdr) + sizeof(c.cmd) + drv_in_len,
			      sizeof(r));
	if (err)
		return err;
	if (core)
		*core = r.core;
	else
		close(r.core.async_fd);
	if (drv)
		*drv = r.drv;
	return 0;
}

void su_ioctl_init(struct su_ioctl *io, uint16_t object,
		   uint16_t method, uint16_t num_attrs)
{
	memset(io, 0, sizeof(*io));
	io->hdr.length = sizeof(io->hdr) + num_attrs * sizeof(io->attrs[0]);
	io->hdr.object_id = object;
	io->hdr.method_id = method;
	io->hdr.num_attrs = num_attrs;
	io->hdr.driver_id = VRNIC_RDMA_DRIVER_ID;
}

void su_ioctl_ptr(struct su_ioctl *io, int i, uint16_t id,
		  void *ptr, uint16_t len)
{
	io->attrs[i].attr_id = id;
	io->attrs[i].len = len;
	io->attrs[i].data = (uint64_t)(uintptr_t)ptr;
}

void su_ioctl_idr(struct su_ioctl *io, int i, uint16_t id,
		  uint64_t handle)
{
	io->attrs[i].attr_id = id;
	io->attrs[i].len = 0;
	io->attrs[i].data = handle;
}

int su_ioctl_call(int fd, struct su_ioctl *io)
{
	return ioctl(fd, RDMA_VERBS_IOCTL, &io->hdr) ? -errno : 0;
}

int su_query_layout(int fd, struct vrnic_layout *l)
{
	struct su_ioctl io;

	su_ioctl_init(&io, VRNIC_OBJECT_DEVICE, VRNIC_METHOD_QUERY_LAYOUT, 1);
	su_ioctl_ptr(&io, 0, VRNIC_ATTR_QUERY_LAYOUT_RESP, l, sizeof(*l));
	return su_ioctl_call(fd, &io);
}

int su_kick(int fd)
{
	struct su_ioctl io;

	su_ioctl_init(&io, VRNIC_OBJECT_DEVICE, VRNIC_METHOD_KICK, 0);
	return su_ioctl_call(fd, &io);
}
