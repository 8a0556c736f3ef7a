# plugins/jit - JIT code (libopagent, perf's jitdump, perf maps) as ELF images in the session (issue 18)
plugin_LTLIBRARIES += plugins/jit.la
plugins_jit_la_SOURCES = plugins/jit/jit.c plugins/jit/jit.h plugins/jit/jit_proc.c \
	plugins/jit/jit_src.c plugins/jit/jit_image.c
plugins_jit_la_CPPFLAGS = -I$(top_srcdir)/sdk -I$(top_srcdir)/lib
plugins_jit_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
plugins_jit_la_LDFLAGS = $(OP_PLUGIN_LINKFLAGS)
# the jitdump/perf-map readers (lib/op_jit.c), the ELF writer (lib/op_jitelf.c), op_trust
plugins_jit_la_LIBADD = lib/libopng.la
