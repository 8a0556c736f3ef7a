# events/ - event catalogues, installed to $(pkgdatadir)/events
# (one events + unit_masks pair per cpu type directory; list new models here).
# events/extras/ holds the hand-kept inputs of tools/gen-events.sh: distributed, not installed.
events_files = \
	events/i386/arch_perfmon/events \
	events/i386/arch_perfmon/unit_masks \
	events/i386/skylake/events \
	events/i386/skylake/unit_masks \
	events/x86-64/family10/events \
	events/x86-64/family10/unit_masks \
	events/x86-64/family15h/events \
	events/x86-64/family15h/unit_masks \
	events/x86-64/family17h/events \
	events/x86-64/family17h/unit_masks \
	events/x86-64/family19h/events \
	events/x86-64/family19h/unit_masks \
	events/x86-64/generic/events \
	events/x86-64/generic/unit_masks
nobase_dist_pkgdata_DATA = $(events_files)
EXTRA_DIST += \
	tools/gen-events.sh \
	tools/gen_events.c \
	events/extras/i386/skylake/minimum \
	events/extras/x86-64/family10/events \
	events/extras/x86-64/family10/minimum \
	events/extras/x86-64/family10/unit_masks \
	events/extras/x86-64/family15h/minimum \
	events/extras/x86-64/family17h/events \
	events/extras/x86-64/family17h/minimum \
	events/extras/x86-64/family19h/events \
	events/extras/x86-64/family19h/minimum

# installcheck (and so distcheck): every catalogue file is where
# op_events_root() looks by default (OP_DATADIR "/events" = $(pkgdatadir)/events)
installcheck_local += events-installcheck
events-installcheck:
	@for f in $(events_files); do \
		test -r "$(DESTDIR)$(pkgdatadir)/$$f" || { \
			echo "events-installcheck: $(DESTDIR)$(pkgdatadir)/$$f is missing"; exit 1; }; \
	done; echo "events-installcheck: all catalogue files installed under $(DESTDIR)$(pkgdatadir)/events"
.PHONY: events-installcheck
