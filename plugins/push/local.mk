# plugins/push - push to Pyroscope or Parca (libcurl), bounded on-disk spool;
# the profile model and encoder are libopprofile's (issue 19, C4)
if BUILD_PUSH_PLUGIN
plugin_LTLIBRARIES += plugins/push.la
endif
plugins_push_la_SOURCES = plugins/push/push.c plugins/push/spool.c plugins/push/spool.h \
	plugins/common/netplug.c plugins/common/netplug.h plugins/common/netsnap.c
plugins_push_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/common \
	-I$(top_srcdir)/lib/profile $(PUSH_CFLAGS)
plugins_push_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden -pthread
plugins_push_la_LDFLAGS = $(OP_PLUGIN_LINKFLAGS) -pthread
plugins_push_la_LIBADD = lib/libopprofile.la lib/libopng.la $(PUSH_LIBS)
