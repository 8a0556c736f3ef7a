/*
 * replay.h - the --record / --replay stream (replay.c): the raw bytes taken
 * off the rings, chunk by chunk, with what is needed to decode and merge
 * them again exactly as live (event layouts, id map, round watermarks).
 * SPDX-License-Identifier: MIT
 *
 * File layout (little-endian, native sizes):
 *   struct replay_file_header
 *   chunks: struct replay_chunk (32 bytes) + payload, padded to 8 bytes
 *     REPLAY_EVENT  a = event index; payload = 3 u64 + 2 u32: sample_type,
 *                   read_format, reserved 0, counter, source
 *     REPLAY_IDS    payload = pairs of u64 {id, event index}
 *     REPLAY_DATA   a = ring index (REPLAY_RING_SYNTH for synthesized
 *                   records), b = bytes; payload = records as read
 *     REPLAY_ROUND  a = watermark: deliver queued records with time <= a
 *     REPLAY_LOST   a = the kernel's lost-record total so far (PERF_FORMAT_LOST);
 *                   payload (absent in older files) = 3 u64, the records
 *                   lost since the previous REPLAY_LOST: samples, side-band
 *                   records, records of either kind (perf_lost_checkpoint)
 *     REPLAY_END    last chunk of a complete file
 */
#ifndef OP_CORE_REPLAY_H
#define OP_CORE_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REPLAY_MAGIC "OPNGPERF"
#define REPLAY_VERSION 1
#define REPLAY_RING_SYNTH UINT32_MAX
/* no chunk payload is larger than this (rings are capped at 256 MiB) */
#define REPLAY_MAX_PAYLOAD (1ull << 30)

struct replay_file_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size; /* sizeof(struct replay_file_header) */
	uint64_t queue_bytes; /* merge queue geometry used while recording */
	uint64_t queue_entries;
	uint64_t reserved[4];
};

enum replay_chunk_type {
	REPLAY_EVENT = 1,
	REPLAY_IDS = 2,
	REPLAY_DATA = 3,
	REPLAY_ROUND = 4,
	REPLAY_LOST = 5,
	REPLAY_END = 6,
};

struct replay_chunk {
	uint32_t type;
	uint32_t reserved;
	uint64_t len; /* payload bytes (before padding) */
	uint64_t a, b;
};

_Static_assert(sizeof(struct replay_chunk) == 32, "replay chunk header is 32 bytes");
_Static_assert(sizeof(struct replay_file_header) == 64, "replay file header is 64 bytes");

struct replay_event_payload {
	uint64_t sample_type, read_format, reserved;
	uint32_t counter, source;
};

/* ---- writer: buffered, one write() per REPLAY_WBUF bytes ---- */
struct replay_writer;

/* replay_writer_create: replace an existing regular file (--record-overwrite) */
#define REPLAY_OVERWRITE 1u

/*
 * Create @path, a new file: whatever is already at the name is an error
 * (-EEXIST; a symlink is never followed), unless @flags has REPLAY_OVERWRITE
 * and it is a regular file, which is then replaced by a new one (unlinked,
 * never truncated). As root, a directory op_trust's rule does not trust
 * (not root's, or writable by group or others: /tmp) is refused (-EPERM) and
 * the file is 0600 (else 0644). -errno; @err gets a message naming the path
 * (and the option or directory at fault).
 */
int replay_writer_create(struct replay_writer **out, const char *path, unsigned flags,
			 uint64_t queue_bytes, uint64_t queue_entries, char *err, size_t err_len);
/* replay_writer_create without flags: a new file only */
int replay_writer_open(struct replay_writer **out, const char *path, uint64_t queue_bytes,
		       uint64_t queue_entries, char *err, size_t err_len);
/* Append a chunk whose payload is @p1[n1] followed by @p2[n2]. */
int replay_write(struct replay_writer *w, uint32_t type, uint64_t a, uint64_t b, const void *p1,
		 size_t n1, const void *p2, size_t n2);
/* Flush the buffer to the file (also done by close). */
int replay_writer_flush(struct replay_writer *w);
/* Flush and close; returns the first write error seen, if any. */
int replay_writer_close(struct replay_writer *w);
uint64_t replay_writer_bytes(const struct replay_writer *w);

/* ---- reader: maps the file, validates each chunk before handing it out ---- */
struct replay_reader {
	const uint8_t *map;
	size_t size;
	size_t off; /* next chunk */
	struct replay_file_header hdr;
	char path[256];
};

/*
 * Open and check the header. The file is opened as lib/op_trust's rule
 * says: not through a symbolic link (-ELOOP), a regular file (-EINVAL),
 * owned by root or the reader and not writable by others (by group or
 * others as root): -EPERM. -errno (-EINVAL for a bad header) and @err.
 */
int replay_reader_open(struct replay_reader *r, const char *path, char *err, size_t err_len);
/*
 * Next chunk: 1 with *c and *payload set, 0 at a clean REPLAY_END, -EINVAL
 * with @err ("FILE: offset N: ...") for a truncated or corrupt file.
 */
int replay_next(struct replay_reader *r, struct replay_chunk *c, const uint8_t **payload, char *err,
		size_t err_len);
void replay_reader_close(struct replay_reader *r);

#endif /* OP_CORE_REPLAY_H */
