# plugins/pprof - pull: GET /debug/pprof/profile?seconds=N and /metrics;
# the profile model and encoder are libopprofile's (issue 19, C4). The HTTP
# server (libmicrohttpd) runs in the unprivileged helper oprofiled-pull
# (plugins/common/np_child: issue 20's privilege separation): the plugin
# itself links no HTTP or TLS library.
if BUILD_PPROF_PLUGIN
plugin_LTLIBRARIES += plugins/pprof.la
pkglibexec_PROGRAMS += plugins/libexec/oprofiled-pull
endif
plugins_pprof_la_SOURCES = plugins/pprof/pprof.c plugins/pprof/metrics.c plugins/pprof/metrics.h \
	plugins/pprof/pull_proto.h plugins/common/np_child.c plugins/common/np_child.h \
	plugins/common/netplug.c \
	plugins/common/netplug.h plugins/common/netsnap.c
plugins_pprof_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/common \
	-I$(top_srcdir)/lib/profile
plugins_pprof_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden -pthread
plugins_pprof_la_LDFLAGS = $(OP_PLUGIN_LINKFLAGS) -pthread
plugins_pprof_la_LIBADD = lib/libopprofile.la lib/libopng.la
# a plain executable: no libtool library (lib/op_trust.c compiled in for np_child)
plugins_libexec_oprofiled_pull_SOURCES = plugins/pprof/oprofiled-pull.c plugins/pprof/pull_proto.h \
	plugins/common/np_child.c plugins/common/np_child.h lib/op_trust.c lib/op_trust.h
plugins_libexec_oprofiled_pull_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/common \
	$(MHD_CFLAGS)
plugins_libexec_oprofiled_pull_CFLAGS = $(AM_CFLAGS) -pthread
plugins_libexec_oprofiled_pull_LDADD = $(MHD_LIBS) -lpthread
dist_man8_MANS += tools/man/oprofiled-pull.8
