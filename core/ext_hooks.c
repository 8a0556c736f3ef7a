/*
 * ext_hooks.c - SDK 1.2 dispatch of session moments to the plugins'
 * session hooks (called by main, control and the pipeline). Buffer sync
 * itself calls the proc hooks and anon resolvers (sync.c: it is linked
 * without the loader). The registrations are ext_reg.c's.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "ext_int.h"

static uint64_t ext_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const char *ext_session_kind_name(uint32_t kind)
{
	static const char *const names[] = { "?", "start", "dump", "rotated", "stop" };

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "?";
}

void ext_session_event(struct ext_loader *l, uint32_t kind, const char *dir, const char *prev_dir)
{
	struct op_session_event e;
	size_t i;
	int rc;

	if (!l || !l->reg.nr_session_hooks)
		return;
	memset(&e, 0, sizeof(e));
	e.size = sizeof(e);
	e.kind = kind;
	e.dir = dir;
	e.prev_dir = kind == OP_SESSION_ROTATED ? prev_dir : NULL;
	e.end_ns = ext_wall_ns();
	if (kind == OP_SESSION_START || !l->session_start_ns)
		l->session_start_ns = e.end_ns;
	e.start_ns = l->session_start_ns;
	for (i = 0; i < l->reg.nr_session_hooks; i++) {
		const struct ext_hook_entry *h = &l->reg.session_hooks[i];

		/* ROTATED: the hook hears when the finished session began, then a new one does */
		rc = h->session.on_event(h->priv, &e);
		if (rc)
			ext_log_msg(l, false, "plugin \"%s\": session hook \"%s\" failed on %s: %s",
				    h->owner->name, h->session.name, ext_session_kind_name(kind),
				    rc < 0 ? strerror(-rc) : "not a -errno value");
	}
	if (kind == OP_SESSION_ROTATED)
		l->session_start_ns = e.end_ns;
}
