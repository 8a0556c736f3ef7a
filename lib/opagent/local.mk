# lib/opagent - libopagent.so.1: OProfile 1.x's JIT agent API writing perf
# jitdump records (issue 18). Standalone: no libopng, only the format
# definitions of lib/op_jit.h. Installed as OProfile installed it: the
# header as <opagent.h>, the library in libdir, plus opagent.pc.
lib_LTLIBRARIES += lib/opagent/libopagent.la
lib_opagent_libopagent_la_SOURCES = lib/opagent/opagent.c lib/opagent/opagent.h lib/op_jit.h
lib_opagent_libopagent_la_CFLAGS = $(AM_CFLAGS) -pthread -fvisibility=hidden
# 1:0:0 -> soname libopagent.so.1, as OProfile's
lib_opagent_libopagent_la_LDFLAGS = -version-info 1:0:0 -no-undefined -pthread \
	-Wl,--version-script=$(srcdir)/lib/opagent/opagent.map
lib_opagent_libopagent_la_DEPENDENCIES = $(srcdir)/lib/opagent/opagent.map
include_HEADERS += lib/opagent/opagent.h
pkgconfig_DATA += lib/opagent/opagent.pc
EXTRA_DIST += lib/opagent/opagent.pc.in lib/opagent/opagent.map lib/opagent/README.md
# opagent installcheck: OProfile's documented API text built against the
# installed header and .pc, linked with the installed library, run
installcheck_local += opagent-installcheck
opagent-installcheck:
	test -f '$(DESTDIR)$(includedir)/opagent.h'
	test -f '$(DESTDIR)$(libdir)/pkgconfig/opagent.pc'
	PKG_CONFIG_PATH='$(DESTDIR)$(libdir)/pkgconfig' PKG_CONFIG_SYSROOT_DIR='$(DESTDIR)'; \
	  export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR; \
	  $(CC) -O2 -Wall -Wextra -Werror -o opagent-user$(EXEEXT) \
	    '$(srcdir)/tests/integration/jit_progs/opagent_compat.c' \
	    `$(PKG_CONFIG) --cflags --libs opagent`
	d=`mktemp -d`; OPROFILE_JITDUMP_DIR=$$d LD_LIBRARY_PATH='$(DESTDIR)$(libdir)' \
	  ./opagent-user$(EXEEXT) 100; rc=$$?; rm -rf "$$d"; test $$rc = 0
	rm -f opagent-user$(EXEEXT)
.PHONY: opagent-installcheck
