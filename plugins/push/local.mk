# plugins/push - push to Pyroscope or Parca, bounded on-disk spool; the
# profile model and encoder are libopprofile's (issue 19, C4). The plugin
# builds each request; the helper program oprofiled-push performs it with
# libcurl, unprivileged (issue 20, privsep: no libcurl in the daemon); the URL
# setting is parsed and the query escaped with liburiparser (libc only)
if BUILD_PUSH_PLUGIN
plugin_LTLIBRARIES += plugins/push.la
pkglibexec_PROGRAMS += plugins/libexec/oprofiled-push
endif
plugins_push_la_SOURCES = plugins/push/push.c plugins/push/spool.c plugins/push/spool.h \
	plugins/push/push_url.c plugins/push/push_url.h \
	plugins/push/push_wire.h plugins/common/np_child.c plugins/common/np_child.h \
	plugins/common/netplug.c plugins/common/netplug.h plugins/common/netsnap.c
plugins_push_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/common \
	-I$(top_srcdir)/lib/profile $(PUSH_CFLAGS) $(URIPARSER_CFLAGS)
plugins_push_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden -pthread
plugins_push_la_LDFLAGS = $(OP_PLUGIN_LINKFLAGS) -pthread
plugins_push_la_LIBADD = lib/libopprofile.la lib/libopng.la $(PUSH_LIBS) $(URIPARSER_LIBS)
# a plain executable (no libtool library linked: not a wrapper script)
plugins_libexec_oprofiled_push_SOURCES = plugins/push/oprofiled-push.c plugins/push/push_wire.h \
	plugins/common/np_child.c plugins/common/np_child.h lib/op_trust.c lib/op_trust.h
plugins_libexec_oprofiled_push_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/common \
	$(PUSH_CURL_CFLAGS)
plugins_libexec_oprofiled_push_LDADD = $(PUSH_CURL_LIBS)
dist_man8_MANS += tools/man/oprofiled-push.8
