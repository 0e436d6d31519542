// SPDX-License-Identifier: GPL-2.0
/*
 * Guest half of the guest-kill test: processes run verified traffic (one
 * also creating and destroying CQs) and, once all are busy, the file
 * $FAULT_MARKER is written; then everything runs until the host kills QEMU.
 * Exits non-zero only if the traffic did not start or went wrong.
 */
#include "fault_util.h"

#define WORKERS 3

int main(void)
{
	const char *marker = getenv("FAULT_MARKER");
	pid_t pid[WORKERS];
	int fd, st;

	if (!marker || fu_start_workers(pid, WORKERS, 1, 120000)) {
		fprintf(stderr, "traffic_forever: no marker or no traffic\n");
		return 1;
	}
	fd = open(marker, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return 1;
	close(fd);
	fprintf(stderr, "traffic_forever: %d processes busy\n", WORKERS);
	/* A worker that returns saw a failure: report it while still alive. */
	if (wait(&st) > 0)
		fprintf(stderr, "traffic_forever: a worker ended, status %#x\n",
			st);
	return 1;
}
