# plugins/pprof - pull: GET /debug/pprof/profile?seconds=N and /metrics (libmicrohttpd);
# the profile model and encoder are libopprofile's (issue 19, C4)
if BUILD_PPROF_PLUGIN
plugin_LTLIBRARIES += plugins/pprof.la
endif
plugins_pprof_la_SOURCES = plugins/pprof/pprof.c plugins/pprof/metrics.c plugins/pprof/metrics.h \
	plugins/common/netplug.c \
	plugins/common/netplug.h plugins/common/netsnap.c
plugins_pprof_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/common \
	-I$(top_srcdir)/lib/profile $(MHD_CFLAGS)
plugins_pprof_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden -pthread
plugins_pprof_la_LDFLAGS = $(OP_PLUGIN_LINKFLAGS) -pthread
plugins_pprof_la_LIBADD = lib/libopprofile.la lib/libopng.la $(MHD_LIBS)
