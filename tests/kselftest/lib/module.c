// SPDX-License-Identifier: GPL-2.0
/* vrnic.ko unloaded and loaded again, and its debugfs directory. */
#include <sys/mount.h>
#include <sys/syscall.h>

#include "suite.h"

int su_rmmod(void)
{
	return syscall(SYS_delete_module, "vrnic", O_NONBLOCK) ? -errno : 0;
}

int su_insmod(const char *params)
{
	char path[PATH_MAX];
	int fd, ret, i;

	if (su_module_path(path, sizeof(path), "vrnic.ko"))
		return -ENOENT;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
	close(fd);
	if (ret)
		return ret;
	for (i = 0; i < 100 && !su_port_active(); i++)
		su_sleep_ms(100);
	return su_port_active() ? 0 : -ETIMEDOUT;
}

int su_reload(const char *params)
{
	char addrs[1024];
	int ret;

	su_save_netdev_addrs(addrs, sizeof(addrs));
	ret = su_rmmod() ?: su_insmod(params);
	if (!ret)
		su_restore_netdev_addrs(addrs);
	return ret;
}

int su_debugfs_dir(char *dir, size_t len)
{
	char link[PATH_MAX];
	ssize_t n;

	if (access("/sys/kernel/debug/vrnic", F_OK))
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	n = readlink(SU_SYS "/device", link, sizeof(link) - 1);
	if (n <= 0)
		return -1;
	link[n] = 0;
	snprintf(dir, len, "/sys/kernel/debug/vrnic/%s", basename(link));
	return access(dir, F_OK);
}
