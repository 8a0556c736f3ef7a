# plugins/ibs - AMD Instruction-Based Sampling (ibs_fetch / ibs_op PMUs -> derived IBS events)
plugin_LTLIBRARIES += plugins/ibs.la
plugins_ibs_la_SOURCES = plugins/ibs/ibs.c plugins/ibs/ibs_decode.c plugins/ibs/ibs_decode.h
plugins_ibs_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/sdk -I$(top_srcdir)/lib
plugins_ibs_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
plugins_ibs_la_LDFLAGS = $(OP_PLUGIN_LINKFLAGS)
plugins_ibs_la_LIBADD = lib/libopng.la
