// SPDX-License-Identifier: GPL-2.0
/*
 * What the tests compare: VmPin, /proc/meminfo, `rdma res` counts, the
 * port counters of `rdma statistic`.
 */
#include "suite.h"

/* The number of a "@key:   N kB" line of @path, or -1. */
static long su_file_kb(const char *path, const char *key)
{
	char line[256];
	size_t kl = strlen(key);
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':') {
			v = strtol(line + kl + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

long su_vmpin_kb(pid_t pid)
{
	char path[64];

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	return su_file_kb(path, "VmPin");
}

long su_meminfo_kb(const char *key)
{
	return su_file_kb("/proc/meminfo", key);
}

int su_res_get(struct su_res *r)
{
	char line[512], key[32];
	int found = 0, off, n;
	long val;
	char *s;
	FILE *f;

	memset(r, 0xff, sizeof(*r));
	f = popen("rdma res show 2>/dev/null", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		s = strstr(line, " " SU_DEV ": ");
		if (!s)
			continue;
		s += strlen(" " SU_DEV ": ");
		while (sscanf(s, "%31s %ld%n", key, &val, &off) == 2) {
			if (!strcmp(key, "pd"))
				r->pd = val;
			else if (!strcmp(key, "cq"))
				r->cq = val;
			else if (!strcmp(key, "qp"))
				r->qp = val;
			else if (!strcmp(key, "mr"))
				r->mr = val;
			else if (!strcmp(key, "ctx"))
				r->ctx = val;
			s += off;
		}
		found = 1;
	}
	n = pclose(f);
	return found && n == 0 ? 0 : -1;
}

int su_res_equal(const struct su_res *a, const struct su_res *b)
{
	return a->pd == b->pd && a->cq == b->cq && a->qp == b->qp &&
	       a->mr == b->mr && a->ctx == b->ctx;
}

int su_res_wait(const struct su_res *want, struct su_res *now,
		int ms)
{
	long end = su_now_ms() + ms;

	do {
		if (!su_res_get(now) && su_res_equal(want, now))
			return 0;
		su_sleep_ms(50);
	} while (su_now_ms() < end);
	return -1;
}

/* `rdma statistic` prints "link vrnic0/1 name value name value ...". */
long su_counter(const char *name)
{
	FILE *p = popen("rdma statistic show link " SU_DEV "/1 2>/dev/null", "r");
	char tok[128], prev[128] = "";
	long v = -1;

	if (!p)
		return -1;
	while (fscanf(p, "%127s", tok) == 1) {
		if (!strcmp(prev, name)) {
			v = strtol(tok, NULL, 10);
			break;
		}
		snprintf(prev, sizeof(prev), "%s", tok);
	}
	pclose(p);
	return v;
}

long su_counter_after(const char *name)
{
	su_sleep_ms(50);
	return su_counter(name);
}
