# plugins/cgroup - the cgroup (container, systemd unit) of each process into stats/cgroups (issue 20)
plugin_LTLIBRARIES += plugins/cgroup.la
plugins_cgroup_la_SOURCES = plugins/cgroup/cgroup.c
plugins_cgroup_la_CPPFLAGS = -I$(top_srcdir)/sdk -I$(top_srcdir)/lib
plugins_cgroup_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
plugins_cgroup_la_LDFLAGS = $(OP_PLUGIN_LINKFLAGS)
# the index format and the trust rule (lib/op_cgroups.c, lib/op_trust.c)
plugins_cgroup_la_LIBADD = lib/libopng.la
