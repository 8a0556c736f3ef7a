/*
 * op_exchange.c - swaps two paths with renameat2(RENAME_EXCHANGE) in a tight
 * loop for at most SECONDS, until STOPFILE exists or until killed: the
 * attacker of the plugin loader's swap-race test (swap_race.sh). Prints the
 * number of swaps.
 *   op_exchange PATH_A PATH_B SECONDS [STOPFILE]
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	unsigned long long swaps = 0;
	time_t end;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: op_exchange PATH_A PATH_B SECONDS [STOPFILE]\n");
		return 2;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	end = time(NULL) + atoi(argv[3]);
	while (!stop &&
	       (swaps & 1023 || (time(NULL) < end && (argc == 4 || access(argv[4], F_OK))))) {
		if (renameat2(AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE)) {
			fprintf(stderr, "op_exchange: %s <-> %s: %s\n", argv[1], argv[2],
				strerror(errno));
			return 1;
		}
		swaps++;
	}
	printf("%llu swaps\n", swaps);
	return 0;
}
