# plugins/amd64 - amd64 hardware models (shares plugins/common/model_pfm.c, compiled in)
plugin_LTLIBRARIES += plugins/amd64.la
plugins_amd64_la_SOURCES = plugins/amd64/amd64.c plugins/common/model_pfm.c plugins/common/model_pfm.h
plugins_amd64_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/common
plugins_amd64_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
plugins_amd64_la_LDFLAGS = $(OP_PLUGIN_LINKFLAGS)
plugins_amd64_la_LIBADD = lib/libopng.la $(PFM_LIBS)
