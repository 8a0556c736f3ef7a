# core/ - oprofiled, built by stage.  Each stage is a convenience library so
# that oprofiled, the unit tests, the fuzzers and the benchmarks link the same
# code; docs/ARCHITECTURE.md names every file.
sbin_PROGRAMS += core/oprofiled
# main: options, start-up order, the signal/run loop; evpick: model and events
core_oprofiled_SOURCES = core/main.c core/evpick.c core/evpick.h
core_oprofiled_CFLAGS = $(AM_CFLAGS) $(LIBCONFIG_CFLAGS)
core_oprofiled_LDADD =

# the one logger every stage writes through
noinst_LTLIBRARIES += core/liboplog.la
core_liboplog_la_SOURCES = core/log.c core/log.h

# configuration and the plugin loader: options, the config file, the values
# both take, the SDK's host side (dlopen, registrations, host services)
noinst_LTLIBRARIES += core/libopload.la
core_libopload_la_SOURCES = core/options.c core/options_print.c core/options.h \
	core/optval.c core/optval.h \
	core/config.c core/config_keys.c core/config_wide.c core/conf.h core/conf_int.h \
	core/record.h core/ext.c core/ext.h core/ext_int.h \
	core/ext_log.c core/ext_reg.c core/ext_host.c core/ext_probe.c core/ext_elf.c
core_libopload_la_CFLAGS = $(AM_CFLAGS) $(LIBCONFIG_CFLAGS)
core_libopload_la_LIBADD = core/liboplog.la $(LIBCONFIG_LIBS) $(DL_LIBS)

# the sample path, ring to sample file: perf_event rings, decoder,
# time-ordered merge and delivery, record/replay, /proc synthesis, then
# buffer sync (cookies, tasks), trans, the sfile hash, stats, the session
noinst_LTLIBRARIES += core/libopsample.la
core_libopsample_la_SOURCES = core/perf.c core/perf.h core/perf_int.h core/perf_deliver.c \
	core/perf_open.c core/perf_replay.c core/perf_decode.c core/perf_decode.h \
	core/perf_queue.c core/perf_queue.h core/ring.c core/ring.h core/replay.c core/replay.h \
	core/proc_synth.c core/proc_synth.h \
	core/evbuf.h core/evbuf.c core/cookie.h core/cookie.c core/task.h core/task.c \
	core/sync.h core/sync.c core/trans.h core/trans.c core/sfile.h core/sfile.c \
	core/sfile_int.h core/sfile_open.c core/sfile_file.c \
	core/stats.h core/stats.c core/session.h core/session.c core/session_int.h \
	core/session_dir.c core/session_entry.c
core_libopsample_la_LIBADD = core/liboplog.la

# the daemon's pipeline object: the sample path's stages wired together,
# the drain/dump/stats/close verbs main (signals) and control (opcontrol) share
noinst_LTLIBRARIES += core/libopdaemon.la
core_libopdaemon_la_SOURCES = core/pipeline.c core/pipeline.h
core_libopdaemon_la_CFLAGS = $(AM_CFLAGS) $(LIBCONFIG_CFLAGS)
core_libopdaemon_la_LIBADD = core/libopsample.la core/libopload.la core/liboplog.la

core_oprofiled_LDADD += core/libopdaemon.la core/libopload.la core/libopsample.la core/liboplog.la lib/libopng.la \
	$(LIBCONFIG_LIBS) $(PFM_LIBS) $(DL_LIBS)

# service mode: daemonizing, RLIMIT_NOFILE (daemonize.c), the owner-only
# control socket opcontrol talks to (control.c), save/reset/rotate of
# samples/current
core_oprofiled_SOURCES += core/daemonize.c core/daemonize.h core/control.c core/control.h \
	core/rotate.c core/rotate.h

# --- issue 18: SDK 1.2 dispatch (proc hooks, session hooks, anon resolvers) ---
core_libopload_la_SOURCES += core/ext_hooks.c
