# lib/ - code shared by daemon, plugins and tools (odb, names, events, utils)
lib_LTLIBRARIES += lib/libopng.la
lib_libopng_la_SOURCES = \
	lib/op_header.h lib/op_header.c lib/odb.h lib/odb.c lib/op_mangle.h
# 1:0:0: odb_t changed layout (the writer's own size/cur, broken; issue 14)
# 2:0:1: op_trust_*, op_xml_put(), op_utf8_len(), op_abi_* added (issues 16, 17)
# 3:0:0: struct op_event_spec gained freq_hz mid-struct (incompatible); op_jit_*,
#        op_jitelf_*, op_buildid_*, op_cgroups_*, op_ksyms_store_*, op_cgs_read added
#        (issues 18, 19, 20)
# 4:0:0: op_parsed_name, op_mangle_args, op_cgroup_entry/_index grew (the
#        --separate=cgroup split key, start times), a second odb writer is -EBUSY; the
#        stack reader passes a struct with the version 3 context (issue 20)
lib_libopng_la_LDFLAGS = -version-info 4:0:0 -no-undefined
EXTRA_DIST += lib/opcount/opcount.pc.in
# names: sample-file names, events/ catalogue parser, cpu types
lib_libopng_la_SOURCES += lib/op_mangle.c lib/op_events.h lib/op_events.c lib/op_cpu.h lib/op_cpu.c
# the rotation interval grammar (oprofiled's option, config and control; opcontrol)
lib_libopng_la_SOURCES += lib/op_interval.h lib/op_interval.c
# on-disk formats and session names shared by the daemon, its plugins and the tools (headers only)
lib_libopng_la_SOURCES += lib/op_cg_format.h lib/op_session_layout.h
# the kallsyms/modules formats: the kernel plugin and opreport
lib_libopng_la_SOURCES += lib/op_ksyms.h lib/op_ksyms.c
# who owns a file and every directory above it: the one trust rule (sshd's StrictModes)
lib_libopng_la_SOURCES += lib/op_trust.h lib/op_trust.c
# XML text escaping: ophelp -X (and opreport -X)
lib_libopng_la_SOURCES += lib/op_xml.h lib/op_xml.c

# opimport: the abi file and the conversion of foreign sample files (issue 17)
lib_libopng_la_SOURCES += lib/op_abi.h lib/op_abi.c
# opcount: virtual per-process counters library (issue 8)
lib_LTLIBRARIES += lib/libopcount.la
lib_libopcount_la_SOURCES = lib/opcount/opcount.c lib/opcount/opcount.h
# 1:0:1: OC_SKIP_UNSUPPORTED and oc_event_supported() added (issue 15)
lib_libopcount_la_LDFLAGS = -version-info 2:0:2 -no-undefined
lib_libopcount_la_LIBADD = $(PFM_LIBS)
sdkinclude_HEADERS += lib/opcount/opcount.h
pkgconfig_DATA += lib/opcount/opcount.pc
# opcount installcheck: a program built against the installed header and .pc
EXTRA_DIST += tests/integration/opcount_user.c
installcheck_local += opcount-installcheck
opcount-installcheck:
	test -f '$(DESTDIR)$(sdkincludedir)/opcount.h'
	test -f '$(DESTDIR)$(libdir)/pkgconfig/opcount.pc'
	PKG_CONFIG_PATH='$(DESTDIR)$(libdir)/pkgconfig' PKG_CONFIG_SYSROOT_DIR='$(DESTDIR)'; \
	  export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR; \
	  $(CC) -O2 -Wall -Wextra -Werror -o opcount-user$(EXEEXT) \
	    '$(srcdir)/tests/integration/opcount_user.c' \
	    `$(PKG_CONFIG) --cflags --libs opcount`
	LD_LIBRARY_PATH='$(DESTDIR)$(libdir)' ./opcount-user$(EXEEXT)
	rm -f opcount-user$(EXEEXT)
.PHONY: opcount-installcheck
# --- issue 18: JIT code formats (jitdump, perf maps) and libopagent ---
lib_libopng_la_SOURCES += lib/op_jit.h lib/op_jit.c
# --- issue 19: GNU build IDs of ELF files and the session's build-id index ---
lib_libopng_la_SOURCES += lib/op_buildid.h lib/op_buildid.c lib/op_hex.h
# --- issue 19: the one reader of the call-graph stack table (opreport, libopprofile) ---
lib_libopng_la_SOURCES += lib/op_cg_read.h lib/op_cg_read.c
# --- issue 19: libopprofile, the profile model and the pprof encoder (C4) ---
# Not in libopng: protobuf-c and libdeflate stay out of the daemon and of tools
# that do not export. No libbfd either: oprofiled's plugins link it.
# profile.pb-c.[ch] are generated at build time from upstream's profile.proto.
if BUILD_EXPORT
lib_LTLIBRARIES += lib/libopprofile.la
nodist_lib_libopprofile_la_SOURCES = lib/profile/profile.pb-c.c lib/profile/profile.pb-c.h
lib_libopprofile_la_SOURCES = lib/profile/op_profile.h lib/profile/op_profile_int.h \
	lib/profile/op_profile.c lib/profile/op_profile_load.c lib/profile/op_pprof.c
lib_libopprofile_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_builddir)/lib/profile \
	-I$(top_srcdir)/lib/profile $(PROTOBUF_C_CFLAGS) $(LIBDEFLATE_CFLAGS)
# 1:0:0: op_profile_labels gained cgroup, op_pprof_opts name_fn (issues 19, 20)
lib_libopprofile_la_LDFLAGS = -version-info 1:0:0 -no-undefined
lib_libopprofile_la_LIBADD = lib/libopng.la $(PROTOBUF_C_LIBS) $(LIBDEFLATE_LIBS)
# the generated header before any file that includes it (no BUILT_SOURCES: make check's order)
$(lib_libopprofile_la_OBJECTS): lib/profile/profile.pb-c.h
CLEANFILES += lib/profile/profile.pb-c.c lib/profile/profile.pb-c.h
lib/profile/profile.pb-c.c lib/profile/profile.pb-c.h: $(srcdir)/lib/profile/profile.proto
	$(AM_V_GEN)$(MKDIR_P) lib/profile && \
	  $(PROTOC_C) --c_out=lib/profile -I$(srcdir)/lib/profile $(srcdir)/lib/profile/profile.proto
endif
EXTRA_DIST += lib/profile/profile.proto
include $(srcdir)/lib/opagent/local.mk
# --- issue 20: the kallsyms snapshot stored once per distinct content (kernel plugin, oprofiled) ---
lib_libopng_la_SOURCES += lib/op_ksyms_store.h lib/op_ksyms_store.c
# --- issue 20: the per-session cgroup index stats/cgroups (cgroup plugin, opreport, exports) ---
lib_libopng_la_SOURCES += lib/op_cgroups.h lib/op_cgroups.c
# --- issue 18: JIT code as ELF images (opjitconv's step; plugins/jit writes them, no libbfd) ---
lib_libopng_la_SOURCES += lib/op_jitelf.h lib/op_jitelf.c
