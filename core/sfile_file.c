/*
 * sfile_file.c - the sample files a plugin (or the core's call-graph arcs)
 * opens by spec in a set: sfile_open_spec and the add/sync/close verbs the
 * sample_file_* host services land in.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sfile.h"
#include "sfile_int.h"

static bool sfile_spec_eq(const struct op_file_spec *a, const struct op_file_spec *b)
{
	return a->counter == b->counter && a->is_cg == b->is_cg &&
	       (!a->is_cg || (a->cg_to_cookie == b->cg_to_cookie &&
			      (a->cg_to_is_kernel == 1) == (b->cg_to_is_kernel == 1) &&
			      a->cg_to_anon_start == b->cg_to_anon_start &&
			      a->cg_to_anon_end == b->cg_to_anon_end));
}

struct op_sample_file *sfile_open_spec(struct sfile_table *tab, struct op_sfile *sf,
				       const struct op_file_spec *spec_in)
{
	struct op_file_spec spec = { 0 };
	struct op_sample_file *f;

	if (!sf || !spec_in)
		return NULL;
	memcpy(&spec, spec_in, spec_in->size < sizeof(spec) ? spec_in->size : sizeof(spec));
	spec.size = sizeof(spec);
	for (f = sf->pfiles; f; f = f->next)
		if (sfile_spec_eq(&f->spec, &spec))
			return f;
	f = calloc(1, sizeof(*f));
	if (!f) {
		tab->stats->v[STAT_NO_MEMORY]++;
		return NULL;
	}
	f->spec = spec;
	f->sf = sf;
	f->tab = tab;
	if (sfile_open_odb(tab, sf, &f->db, spec.counter, &spec)) {
		free(f);
		sfile_lost(tab, STAT_LOST_SF_OPEN);
		return NULL;
	}
	f->next = sf->pfiles;
	sf->pfiles = f;
	return f;
}

int sfile_file_add(struct op_sample_file *f, uint64_t key, uint32_t count)
{
	struct sfile_table *tab;
	int rc;

	if (!f)
		return -EINVAL;
	tab = f->tab;
	if (f->db.fd < 0) {
		if (f->gave_up) { /* changed under the writer */
			sfile_lost(tab, STAT_LOST_SF_CHANGED);
			return -EIO;
		}
		/* handed over to another set of the same name (sfile_hand_over) */
		rc = sfile_open_odb(tab, f->sf, &f->db, f->spec.counter, &f->spec);
		if (rc) {
			f->db.fd = -1;
			sfile_lost(tab, STAT_LOST_SF_OPEN);
			return rc;
		}
	}
	rc = odb_update(&f->db, key, count);
	if (rc) {
		sfile_lost(tab, f->db.broken ? STAT_LOST_SF_CHANGED : STAT_LOST_SF_GROW);
		if (f->db.broken) {
			sfile_logf(tab,
				   "sample file %s changed by another process under the daemon "
				   "(bad index in its hash chains): no longer written, its "
				   "samples counted as lost",
				   f->db.path ? f->db.path : "?");
			tab->stats->v[STAT_ODB_SATURATED] += f->db.saturated;
			odb_close(&f->db);
			f->db.fd = -1;
			f->gave_up = true;
			tab->nr_open--;
			f->sf->nr_open--;
		}
	}
	return rc;
}

int sfile_file_sync(struct op_sample_file *f)
{
	return f ? odb_sync(&f->db) : -EINVAL;
}

void sfile_file_close(struct op_sample_file *f)
{
	struct op_sample_file **pp;

	if (!f)
		return;
	for (pp = &f->sf->pfiles; *pp; pp = &(*pp)->next) {
		if (*pp == f) {
			*pp = f->next;
			break;
		}
	}
	if (f->db.fd >= 0) {
		f->tab->stats->v[STAT_ODB_SATURATED] += f->db.saturated;
		f->tab->nr_open--;
		f->sf->nr_open--;
	}
	odb_close(&f->db);
	free(f);
}
