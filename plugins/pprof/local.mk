# plugins/pprof - pull: GET /debug/pprof/profile?seconds=N (libmicrohttpd)
if BUILD_PPROF_PLUGIN
plugin_LTLIBRARIES += plugins/pprof.la
endif
plugins_pprof_la_SOURCES = plugins/pprof/pprof.c plugins/common/netplug.c \
	plugins/common/netplug.h plugins/common/netsnap.c plugins/common/sdk12_shim.h
plugins_pprof_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/common $(MHD_CFLAGS)
plugins_pprof_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden -pthread
plugins_pprof_la_LDFLAGS = $(OP_PLUGIN_LINKFLAGS) -pthread
plugins_pprof_la_LIBADD = lib/libopng.la $(MHD_LIBS)
