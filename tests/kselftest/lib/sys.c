// SPDX-License-Identifier: GPL-2.0
/* Clock, files, shell commands, the netdev, the module path and forked children. */
#include "suite.h"

long su_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void su_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int su_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	char *nl;

	if (!f)
		return -errno;
	if (!fgets(buf, len, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	nl = strchr(buf, '\n');
	if (nl)
		*nl = 0;
	return 0;
}

int su_read_byte(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	unsigned char c;

	if (poll(&p, 1, ms) != 1 || read(fd, &c, 1) != 1)
		return -1;
	return c;
}

int su_res_line(char *buf, size_t len)
{
	FILE *p = popen("rdma res show 2>&1 | grep ' " SU_DEV ": '", "r");
	char *nl;

	if (!p)
		return -1;
	if (!fgets(buf, len, p)) {
		pclose(p);
		return -1;
	}
	pclose(p);
	nl = strchr(buf, '\n');
	if (nl)
		*nl = 0;
	return 0;
}

void su_save_netdev_addrs(char *buf, size_t len)
{
	FILE *p = popen("nd=$(ls " SU_SYS "/device/net | head -n1); "
			"ip -4 -o addr show dev \"$nd\" scope global | "
			"awk '{printf \"%s \", $4}'", "r");
	size_t n;

	buf[0] = 0;
	if (!p)
		return;
	n = fread(buf, 1, len - 1, p);
	buf[n] = 0;
	pclose(p);
}

void su_restore_netdev_addrs(char *buf)
{
	char cmd[1400];

	snprintf(cmd, sizeof(cmd),
		 "nd=$(ls " SU_SYS "/device/net | head -n1); "
		 "ip link set \"$nd\" up; for a in %s; do "
		 "ip addr replace \"$a\" dev \"$nd\"; done", buf);
	if (system(cmd))
		buf[0] = 0;
}

int su_port_active(void)
{
	char buf[64];

	return !su_read_line(SU_SYS "/ports/1/state", buf, sizeof(buf)) &&
	       !strncmp(buf, "4: ACTIVE", 9);
}

int su_module_path(char *path, size_t len, const char *ko)
{
	char exe[PATH_MAX];
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	snprintf(path, len, "%s/../../kernel/%s", dirname(exe), ko);
	return 0;
}

int su_sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

long su_sh_number(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	long n = -1;

	if (!p)
		return -1;
	if (fscanf(p, "%ld", &n) != 1)
		n = -1;
	pclose(p);
	return n;
}

pid_t su_spawn(void (*fn)(int rfd, int wfd), int *to, int *from)
{
	int a[2], b[2];
	pid_t pid;

	if (pipe(a))
		return -1;
	if (pipe(b)) {
		close(a[0]);
		close(a[1]);
		return -1;
	}
	pid = fork();
	if (!pid) {
		close(a[1]);
		close(b[0]);
		fn(a[0], b[1]);
		_exit(1);
	}
	close(a[0]);
	close(b[1]);
	if (pid < 0) {
		close(a[1]);
		close(b[0]);
		return -1;
	}
	*to = a[1];
	*from = b[0];
	return pid;
}

int su_wait_child(pid_t pid, int ms)
{
	long end = su_now_ms() + ms;
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return st;
		if (r < 0)
			return -1;
		if (su_now_ms() >= end) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		su_sleep_ms(10);
	}
}
