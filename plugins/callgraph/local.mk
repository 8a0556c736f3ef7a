# plugins/callgraph - call chains -> caller/callee arc files and whole stacks
plugin_LTLIBRARIES += plugins/callgraph.la
plugins_callgraph_la_SOURCES = plugins/callgraph/callgraph.c
plugins_callgraph_la_CPPFLAGS = -I$(top_srcdir)/sdk -I$(top_srcdir)/lib
plugins_callgraph_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
plugins_callgraph_la_LDFLAGS = $(OP_PLUGIN_LINKFLAGS)
