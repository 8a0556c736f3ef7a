# core/ - oprofiled
sbin_PROGRAMS += core/oprofiled
core_oprofiled_SOURCES = core/main.c
core_oprofiled_CFLAGS = $(AM_CFLAGS) $(LIBCONFIG_CFLAGS)
core_oprofiled_LDADD = lib/libopng.la $(LIBCONFIG_LIBS) $(PFM_LIBS) $(DL_LIBS)

# plugin loader, options, config file (owner: loader). A convenience library
# so that oprofiled and the unit tests link the same code.
noinst_LTLIBRARIES += core/libopcore.la
core_libopcore_la_SOURCES = core/ext.c core/ext.h core/options.c core/options.h \
	core/options_int.h core/config.c core/conf.h
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
