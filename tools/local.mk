# tools/ - opreport, ophelp, opcontrol, opcount
# opcount: event counting for a command/process/thread/system (issue 8)
bin_PROGRAMS += tools/opcount
tools_opcount_SOURCES = tools/opcount.c
tools_opcount_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib/opcount
tools_opcount_LDADD = lib/libopcount.la
# opreport (libbfd: GPL-3, linked into opreport only), ophelp, op-demo (issue 4)
if BUILD_REPORT
# the report library: session and spec reading, symbols (libbfd, kallsyms,
# perf maps), rows, output; opreport and the tools that report like it
# (opannotate, opgprof, oparchive, opexport) link it
noinst_LTLIBRARIES += tools/opreport/libopreport.la
tools_opreport_libopreport_la_SOURCES = tools/opreport/opreport.h \
	tools/opreport/opreport_spec.c tools/opreport/opreport_session.c \
	tools/opreport/opreport_symbols.c tools/opreport/opreport_symtab.c \
	tools/opreport/opreport_ksyms.c tools/opreport/opreport_output.c \
	tools/opreport/opreport_text.c tools/opreport/op_bfd.c tools/opreport/opreport_diff.c \
	tools/opreport/op_demangle.c tools/opreport/op_demangle.h \
	tools/opreport/opreport_callgraph.c tools/opreport/opreport_callgraph.h \
	tools/opreport/flamegraph.c tools/opreport/flamegraph.h
bin_PROGRAMS += tools/opreport/opreport
tools_opreport_opreport_SOURCES = tools/opreport/opreport.c
tools_opreport_opreport_LDADD = tools/opreport/libopreport.la lib/libopng.la $(BFD_LIBS)
endif
noinst_PROGRAMS += tools/op-demo
tools_op_demo_SOURCES = tools/op-demo.c
tools_op_demo_CFLAGS = $(AM_CFLAGS) -O1 -fno-inline -fno-omit-frame-pointer
EXTRA_DIST += tools/opreport/opreport-json.md tools/opreport/opreport.md
bin_PROGRAMS += tools/ophelp
tools_ophelp_SOURCES = tools/ophelp.c
tools_ophelp_LDADD = lib/libopng.la
# opcontrol: status/dump/stop/reset/save/rotate of a running oprofiled (issue 7, owner: deploy)
bin_PROGRAMS += tools/opcontrol
tools_opcontrol_SOURCES = tools/opcontrol.c
tools_opcontrol_CFLAGS = $(AM_CFLAGS) $(LIBCONFIG_CFLAGS)
tools_opcontrol_LDADD = lib/libopng.la $(LIBCONFIG_LIBS)
EXTRA_DIST += tools/opcount.md
# operf and ocount: OProfile 1.x's command lines on oprofiled and opcount (issue 17, front)
bin_PROGRAMS += tools/operf tools/ocount
tools_operf_SOURCES = tools/operf.c tools/frontend.c tools/frontend.h
tools_operf_CPPFLAGS = $(AM_CPPFLAGS) -DOP_SBINDIR='"$(sbindir)"' -DOP_BINDIR='"$(bindir)"'
tools_ocount_SOURCES = tools/ocount.c tools/frontend.c tools/frontend.h
tools_ocount_CPPFLAGS = $(tools_operf_CPPFLAGS)
EXTRA_DIST += tools/operf.md
# man pages of the existing tools and of operf/ocount (issue 17, front)
dist_man1_MANS += tools/man/ophelp.1 tools/man/opcount.1 tools/man/operf.1 tools/man/ocount.1
dist_man8_MANS += tools/man/oprofiled.8 tools/man/opcontrol.8
if BUILD_REPORT
dist_man1_MANS += tools/man/opreport.1
else
EXTRA_DIST += tools/man/opreport.1
endif

# opimport: sample files of another ABI to this machine's (issue 17, owner: opimport)
bin_PROGRAMS += tools/opimport
tools_opimport_SOURCES = tools/opimport.c
tools_opimport_LDADD = lib/libopng.la
EXTRA_DIST += tools/opimport.md
dist_man1_MANS += tools/man/opimport.1
# opannotate: annotated source and disassembly (issue 17, owner: annotate); libbfd and
# libopcodes (GPL-3) through the report library
if BUILD_REPORT
bin_PROGRAMS += tools/opannotate/opannotate
tools_opannotate_opannotate_SOURCES = tools/opannotate/opannotate.c \
	tools/opannotate/opannotate.h tools/opannotate/ann_source.c tools/opannotate/ann_asm.c
tools_opannotate_opannotate_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/opreport
tools_opannotate_opannotate_LDADD = tools/opreport/libopreport.la lib/libopng.la $(OPCODES_LIBS) \
	$(BFD_LIBS)
endif
EXTRA_DIST += tools/opannotate/opannotate.md
dist_man1_MANS += tools/man/opannotate.1
# oparchive, opgprof: archive a session with its binaries; gmon.out for gprof (issue 17, archive)
if BUILD_REPORT
bin_PROGRAMS += tools/oparchive
tools_oparchive_SOURCES = tools/oparchive.c
tools_oparchive_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/opreport
tools_oparchive_LDADD = tools/opreport/libopreport.la lib/libopng.la $(BFD_LIBS)
bin_PROGRAMS += tools/opgprof
tools_opgprof_SOURCES = tools/opgprof.c
tools_opgprof_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/opreport
tools_opgprof_LDADD = tools/opreport/libopreport.la lib/libopng.la $(BFD_LIBS)
endif
dist_man1_MANS += tools/man/oparchive.1 tools/man/opgprof.1
# --- issue 19: opexport: pprof (libopprofile), folded, speedscope ---
if BUILD_REPORT
if BUILD_EXPORT
bin_PROGRAMS += tools/opexport
tools_opexport_SOURCES = tools/opexport.c
tools_opexport_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/opreport -I$(top_srcdir)/lib/profile
tools_opexport_LDADD = tools/opreport/libopreport.la lib/libopprofile.la lib/libopng.la $(BFD_LIBS)
endif
endif
dist_man1_MANS += tools/man/opexport.1
