# plugins/timer - cpu-clock "timer" model (no hardware PMU needed)
plugin_LTLIBRARIES += plugins/timer.la
plugins_timer_la_SOURCES = plugins/timer/timer.c
plugins_timer_la_CPPFLAGS = -I$(top_srcdir)/sdk
plugins_timer_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
plugins_timer_la_LDFLAGS = $(OP_PLUGIN_LINKFLAGS)
