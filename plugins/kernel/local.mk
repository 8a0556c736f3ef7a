# plugins/kernel - kernel image and module resolution, kallsyms snapshot
plugin_LTLIBRARIES += plugins/kernel.la
plugins_kernel_la_SOURCES = plugins/kernel/kernel.c plugins/kernel/kernel.h
plugins_kernel_la_CPPFLAGS = -I$(top_srcdir)/sdk -I$(top_srcdir)/lib
plugins_kernel_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
plugins_kernel_la_LDFLAGS = $(OP_PLUGIN_LINKFLAGS)
# the kallsyms/modules parsers (lib/op_ksyms.c)
plugins_kernel_la_LIBADD = lib/libopng.la
