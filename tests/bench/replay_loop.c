/*
 * replay_loop.c - make a long replay stream out of a real --record file:
 * the event descriptions once, then the recorded chunks (ring data, rounds,
 * lost counts) N times, each copy closed by a round that flushes the merge
 * queue, so that every copy is merged and synced as the original was.
 * Used by bench_sample_path.sh pipeline to time millions of samples.
 *   tests/bench/replay_loop IN OUT N
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

int main(int argc, char **argv)
{
	struct replay_reader rd;
	struct replay_writer *w;
	struct replay_chunk c;
	const uint8_t *p;
	char err[512];
	long n, i;
	int ret;

	if (argc != 4 || (n = strtol(argv[3], NULL, 10)) < 1) {
		fprintf(stderr, "usage: %s IN OUT N (N >= 1 copies)\n", argv[0]);
		return 2;
	}
	if (replay_reader_open(&rd, argv[1], err, sizeof(err))) {
		fprintf(stderr, "replay_loop: %s\n", err);
		return 1;
	}
	if (replay_writer_open(&w, argv[2], rd.hdr.queue_bytes, rd.hdr.queue_entries, err,
			       sizeof(err))) {
		fprintf(stderr, "replay_loop: %s\n", err);
		return 1;
	}
	for (i = 0; i < n; i++) {
		rd.off = rd.hdr.header_size;
		while ((ret = replay_next(&rd, &c, &p, err, sizeof(err))) == 1) {
			if ((c.type == REPLAY_EVENT || c.type == REPLAY_IDS) && i > 0)
				continue;
			if (replay_write(w, c.type, c.a, c.b, p, c.len, NULL, 0))
				goto werr;
		}
		if (ret < 0) {
			fprintf(stderr, "replay_loop: %s\n", err);
			return 1;
		}
		/* the copy ends: deliver all of it before the next one starts */
		if (replay_write(w, REPLAY_ROUND, UINT64_MAX, 0, NULL, 0, NULL, 0))
			goto werr;
	}
	if (replay_write(w, REPLAY_END, 0, 0, NULL, 0, NULL, 0) || replay_writer_close(w))
		goto werr;
	replay_reader_close(&rd);
	return 0;
werr:
	fprintf(stderr, "replay_loop: %s: write failed\n", argv[2]);
	return 1;
}
