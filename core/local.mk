# core/ - oprofiled
sbin_PROGRAMS += core/oprofiled
core_oprofiled_SOURCES = core/main.c
core_oprofiled_CFLAGS = $(AM_CFLAGS) $(LIBCONFIG_CFLAGS)
core_oprofiled_LDADD = lib/libopng.la $(LIBCONFIG_LIBS) $(PFM_LIBS) $(DL_LIBS)

# plugin loader, options, config file (owner: loader). A convenience library
# so that oprofiled and the unit tests link the same code.
noinst_LTLIBRARIES += core/libopcore.la
core_libopcore_la_SOURCES = core/ext.c core/ext.h core/options.c core/options.h \
	core/optval.c core/optval.h core/config.c core/conf.h core/record.h
core_libopcore_la_CFLAGS = $(AM_CFLAGS) $(LIBCONFIG_CFLAGS)
core_libopcore_la_LIBADD = $(LIBCONFIG_LIBS) $(DL_LIBS)
core_oprofiled_LDADD += core/libopcore.la

# buffer sync, trans, sfile hash, stats, session (owner: core). A convenience
# library shared by oprofiled and the unit tests.
noinst_LTLIBRARIES += core/libopsync.la
core_libopsync_la_SOURCES = core/evbuf.h core/evbuf.c core/cookie.h core/cookie.c \
	core/task.h core/task.c core/sync.h core/sync.c core/trans.h core/trans.c \
	core/sfile.h core/sfile.c core/stats.h core/stats.c core/session.h core/session.c
core_libopsync_la_LIBADD = lib/libopng.la
core_oprofiled_LDADD += core/libopsync.la

# sample path: perf_event rings, decoder, time-ordered merge, record/replay,
# /proc synthesis (owner: perf). In libopcore so unit tests link the same code.
core_libopcore_la_SOURCES += core/perf.c core/perf.h core/perf_int.h core/perf_deliver.c \
	core/perf_open.c core/perf_replay.c core/perf_decode.c core/perf_decode.h \
	core/perf_queue.c core/perf_queue.h core/ring.c core/ring.h core/replay.c core/replay.h \
	core/proc_synth.c core/proc_synth.h

# service mode (owner: deploy): daemonizing, RLIMIT_NOFILE, the owner-only
# control socket opcontrol talks to, save/reset/rotate of samples/current
core_oprofiled_SOURCES += core/control.c core/control.h core/rotate.c core/rotate.h
