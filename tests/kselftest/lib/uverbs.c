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

/* A command struct of the header and one ib_uverbs_* body. */
#define SU_CMD(body) struct { struct ib_uverbs_cmd_hdr hdr; body cmd; }

int su_cmd_alloc_pd(int fd, const uint64_t *drv, uint32_t *handle)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_alloc_pd cmd;
		uint64_t drv;
	} c = {};
	struct ib_uverbs_alloc_pd_resp r = {};
	int err;

	c.cmd.response = (uintptr_t)&r;
	if (drv)
		c.drv = *drv;
	err = su_uverbs_write(fd, IB_USER_VERBS_CMD_ALLOC_PD, &c,
			      sizeof(c) - (drv ? 0 : sizeof(c.drv)), sizeof(r));
	*handle = r.pd_handle;
	return err;
}

int su_cmd_dealloc_pd(int fd, uint32_t handle)
{
	SU_CMD(struct ib_uverbs_dealloc_pd) c = { .cmd.pd_handle = handle };

	return su_uverbs_write(fd, IB_USER_VERBS_CMD_DEALLOC_PD, &c, sizeof(c),
			       0);
}

int su_cmd_reg_mr(int fd, uint32_t pd, uint64_t start, uint64_t len,
		  uint64_t va, uint32_t access, const uint64_t *drv,
		  uint32_t *handle)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_reg_mr cmd;
		uint64_t drv;
	} c = {};
	struct ib_uverbs_reg_mr_resp r = {};
	int err;

	c.cmd.response = (uintptr_t)&r;
	c.cmd.start = start;
	c.cmd.length = len;
	c.cmd.hca_va = va;
	c.cmd.pd_handle = pd;
	c.cmd.access_flags = access;
	if (drv)
		c.drv = *drv;
	err = su_uverbs_write(fd, IB_USER_VERBS_CMD_REG_MR, &c,
			      sizeof(c) - (drv ? 0 : sizeof(c.drv)), sizeof(r));
	if (handle)
		*handle = r.mr_handle;
	return err;
}

int su_cmd_dereg_mr(int fd, uint32_t handle)
{
	SU_CMD(struct ib_uverbs_dereg_mr) c = { .cmd.mr_handle = handle };

	return su_uverbs_write(fd, IB_USER_VERBS_CMD_DEREG_MR, &c, sizeof(c), 0);
}

int su_cmd_create_cq(int fd, uint32_t cqe, uint64_t user_handle,
		     struct su_cq_resp *resp)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_create_cq cmd;
		struct vrnic_ibv_create_cq drv;
	} c = {};

	memset(resp, 0, sizeof(*resp));
	c.cmd.response = (uintptr_t)resp;
	c.cmd.user_handle = user_handle;
	c.cmd.cqe = cqe;
	c.cmd.comp_channel = -1;
	return su_uverbs_write(fd, IB_USER_VERBS_CMD_CREATE_CQ, &c, sizeof(c),
			       sizeof(*resp));
}

int su_cmd_destroy_cq(int fd, uint32_t handle)
{
	SU_CMD(struct ib_uverbs_destroy_cq) c = {};
	struct ib_uverbs_destroy_cq_resp r;

	c.cmd.response = (uintptr_t)&r;
	c.cmd.cq_handle = handle;
	return su_uverbs_write(fd, IB_USER_VERBS_CMD_DESTROY_CQ, &c, sizeof(c),
			       sizeof(r));
}

int su_cmd_create_qp(int fd, uint32_t pd, uint32_t send_cq, uint32_t recv_cq,
		     const struct ibv_qp_cap *cap, uint8_t type,
		     uint64_t user_handle, struct su_qp_resp *resp)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_create_qp cmd;
		struct vrnic_ibv_create_qp drv;
	} c = {};

	memset(resp, 0, sizeof(*resp));
	c.cmd.response = (uintptr_t)resp;
	c.cmd.user_handle = user_handle;
	c.cmd.pd_handle = pd;
	c.cmd.send_cq_handle = send_cq;
	c.cmd.recv_cq_handle = recv_cq;
	c.cmd.max_send_wr = cap->max_send_wr;
	c.cmd.max_recv_wr = cap->max_recv_wr;
	c.cmd.max_send_sge = cap->max_send_sge;
	c.cmd.max_recv_sge = cap->max_recv_sge;
	c.cmd.max_inline_data = cap->max_inline_data;
	c.cmd.qp_type = type;
	return su_uverbs_write(fd, IB_USER_VERBS_CMD_CREATE_QP, &c, sizeof(c),
			       sizeof(*resp));
}

int su_cmd_destroy_qp(int fd, uint32_t handle)
{
	SU_CMD(struct ib_uverbs_destroy_qp) c = {};
	struct ib_uverbs_destroy_qp_resp r;

	c.cmd.response = (uintptr_t)&r;
	c.cmd.qp_handle = handle;
	return su_uverbs_write(fd, IB_USER_VERBS_CMD_DESTROY_QP, &c, sizeof(c),
			       sizeof(r));
}

int su_cmd_qp_state(int fd, uint32_t handle)
{
	SU_CMD(struct ib_uverbs_query_qp) c = {};
	struct ib_uverbs_query_qp_resp r = {};
	int err;

	c.cmd.response = (uintptr_t)&r;
	c.cmd.qp_handle = handle;
	c.cmd.attr_mask = IBV_QP_STATE;
	err = su_uverbs_write(fd, IB_USER_VERBS_CMD_QUERY_QP, &c, sizeof(c),
			      sizeof(r));
	return err ? err : r.qp_state;
}
