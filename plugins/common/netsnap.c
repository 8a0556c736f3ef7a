/*
 * netsnap.c - the session's counts as the network plugins see them: a
 * samples directory read into libopprofile's model (C4, the reader and
 * encoder opexport uses too), the delta of two such reads, encoded as
 * gzip'd profile.proto with bare addresses and build IDs (the fleet
 * default: the store symbolizes). Compiled into pprof and push.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netplug.h"
#include "op_profile.h"

struct np_snap {
	struct op_profile *p;
};

static void np_snap_warn(void *arg, const char *msg)
{
	/* a file skipped (corrupt, vanished under a rotation): not worth a line per read */
	(void)arg;
	(void)msg;
}

int np_snap_read(const char *dir, struct np_snap **out, char *err, size_t err_len)
{
	struct op_profile_load_opts o = { 0 };
	struct np_snap *s;
	int rc;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s || !(s->p = op_profile_new())) {
		free(s);
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	op_profile_set_warn(s->p, np_snap_warn, NULL);
	rc = op_profile_load(s->p, dir, &o, err, err_len);
	if (rc == -ENOENT) {
		/* no sample file yet (a fresh or just rotated session): no samples */
		op_profile_free(s->p);
		s->p = op_profile_new();
		rc = s->p ? 0 : -ENOMEM;
	}
	if (rc) {
		np_snap_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void np_snap_free(struct np_snap *s)
{
	if (!s)
		return;
	op_profile_free(s->p);
	free(s);
	/*
	 * A profile of the session takes megabytes for a moment, every pull
	 * or push: give the freed pages back rather than keep the daemon's
	 * RSS at its peak between them.
	 */
	malloc_trim(0);
}

int np_snap_encode(const struct np_snap *now, const struct np_snap *before, uint64_t t0_ns,
		   uint64_t t1_ns, bool skip_empty, void **buf, size_t *len, uint64_t *hz,
		   char *err, size_t err_len)
{
	const struct op_pprof_opts o = { 0 };
	struct op_profile *d, *none = NULL;
	uint8_t *b = NULL;
	int rc;

	/* everything of @now: the difference to an empty profile */
	if (!before && !(none = op_profile_new())) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	d = op_profile_diff(now->p, before ? before->p : none);
	op_profile_free(none);
	if (!d) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	if (skip_empty && !d->nsamples) {
		op_profile_free(d);
		return -ENODATA;
	}
	/* the profile covers the interval asked for, not the session's life */
	d->time_nanos = t0_ns;
	d->duration_nanos = t1_ns > t0_ns ? t1_ns - t0_ns : 0;
	if (hz)
		*hz = d->timer && d->period ? 1000000000ull / d->period : 0;
	rc = op_pprof_encode(d, &o, &b, len);
	op_profile_free(d);
	if (rc) {
		snprintf(err, err_len, "pprof encoding: %s", strerror(-rc));
		return rc;
	}
	*buf = b;
	return 0;
}
