# plugins/intel - intel hardware models (shares plugins/common/model_pfm.c, compiled in)
plugin_LTLIBRARIES += plugins/intel.la
plugins_intel_la_SOURCES = plugins/intel/intel.c plugins/common/model_pfm.c plugins/common/model_pfm.h
plugins_intel_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/common
plugins_intel_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
plugins_intel_la_LDFLAGS = $(OP_PLUGIN_LINKFLAGS)
plugins_intel_la_LIBADD = lib/libopng.la $(PFM_LIBS)
