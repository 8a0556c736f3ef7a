# tools/ - opreport, ophelp, opcontrol, opcount
# opcount: event counting for a command/process/thread/system (issue 8)
bin_PROGRAMS += tools/opcount
tools_opcount_SOURCES = tools/opcount.c
tools_opcount_LDADD = lib/libopcount.la
# opreport (libbfd: GPL-3, linked into opreport only), ophelp, op-demo (issue 4)
if BUILD_REPORT
bin_PROGRAMS += tools/opreport
tools_opreport_SOURCES = tools/opreport.c tools/opreport.h tools/opreport_spec.c \
	tools/opreport_session.c tools/opreport_symbols.c tools/opreport_ksyms.c \
	tools/opreport_output.c tools/opreport_text.c tools/op_bfd.c \
	tools/op_demangle.c tools/op_demangle.h \
	tools/opreport_callgraph.c tools/opreport_callgraph.h tools/flamegraph.c tools/flamegraph.h
tools_opreport_LDADD = lib/libopng.la $(BFD_LIBS)
endif
noinst_PROGRAMS += tools/op-demo
tools_op_demo_SOURCES = tools/op-demo.c
tools_op_demo_CFLAGS = $(AM_CFLAGS) -O1 -fno-inline -fno-omit-frame-pointer
EXTRA_DIST += tools/opreport-json.md tools/opreport.md
bin_PROGRAMS += tools/ophelp
tools_ophelp_SOURCES = tools/ophelp.c
tools_ophelp_LDADD = lib/libopng.la
# opcontrol: status/dump/stop/reset/save/rotate of a running oprofiled (issue 7, owner: deploy)
bin_PROGRAMS += tools/opcontrol
tools_opcontrol_SOURCES = tools/opcontrol.c
tools_opcontrol_CFLAGS = $(AM_CFLAGS) $(LIBCONFIG_CFLAGS)
tools_opcontrol_LDADD = lib/libopng.la $(LIBCONFIG_LIBS)
EXTRA_DIST += tools/opcount.md
