# tests/plugins - fixture plugins for tests/unit/test_ext (owner: loader).
# check_ libraries need an -rpath to be built shared.
OP_FIXTURE_LDFLAGS = -module -avoid-version -shared -rpath /nowhere -no-undefined -Wl,--no-undefined

check_LTLIBRARIES += tests/plugins/fx_all.la tests/plugins/fx_fail.la \
	tests/plugins/fx_clash.la tests/plugins/fx_old.la \
	tests/plugins/fx_major.la tests/plugins/fx_minor.la tests/plugins/fx_small.la \
	tests/plugins/fx_reserved.la tests/plugins/fx_stem.la tests/plugins/fx_nodesc.la \
	tests/plugins/fx_noinit.la tests/plugins/fx_flags.la tests/plugins/fx_invalid.la
tests_plugins_fx_invalid_la_SOURCES = tests/plugins/fx_invalid.c tests/plugins/fx_stubs.h
tests_plugins_fx_invalid_la_LDFLAGS = $(OP_FIXTURE_LDFLAGS)
tests_plugins_fx_all_la_SOURCES = tests/plugins/fx_all.c
tests_plugins_fx_all_la_LDFLAGS = $(OP_FIXTURE_LDFLAGS)
tests_plugins_fx_fail_la_SOURCES = tests/plugins/fx_fail.c tests/plugins/fx_stubs.h
tests_plugins_fx_fail_la_LDFLAGS = $(OP_FIXTURE_LDFLAGS)
tests_plugins_fx_clash_la_SOURCES = tests/plugins/fx_clash.c tests/plugins/fx_stubs.h
tests_plugins_fx_clash_la_LDFLAGS = $(OP_FIXTURE_LDFLAGS)
tests_plugins_fx_old_la_SOURCES = tests/plugins/fx_old.c
tests_plugins_fx_old_la_LDFLAGS = $(OP_FIXTURE_LDFLAGS)
tests_plugins_fx_major_la_SOURCES = tests/plugins/fx_bad.c
tests_plugins_fx_major_la_CPPFLAGS = $(AM_CPPFLAGS) -DFX_BAD_MAJOR
tests_plugins_fx_major_la_LDFLAGS = $(OP_FIXTURE_LDFLAGS)
tests_plugins_fx_minor_la_SOURCES = tests/plugins/fx_bad.c
tests_plugins_fx_minor_la_CPPFLAGS = $(AM_CPPFLAGS) -DFX_BAD_MINOR
tests_plugins_fx_minor_la_LDFLAGS = $(OP_FIXTURE_LDFLAGS)
tests_plugins_fx_small_la_SOURCES = tests/plugins/fx_bad.c
tests_plugins_fx_small_la_CPPFLAGS = $(AM_CPPFLAGS) -DFX_BAD_SMALL
tests_plugins_fx_small_la_LDFLAGS = $(OP_FIXTURE_LDFLAGS)
tests_plugins_fx_reserved_la_SOURCES = tests/plugins/fx_bad.c
tests_plugins_fx_reserved_la_CPPFLAGS = $(AM_CPPFLAGS) -DFX_BAD_RESERVED
tests_plugins_fx_reserved_la_LDFLAGS = $(OP_FIXTURE_LDFLAGS)
tests_plugins_fx_stem_la_SOURCES = tests/plugins/fx_bad.c
tests_plugins_fx_stem_la_CPPFLAGS = $(AM_CPPFLAGS) -DFX_BAD_STEM
tests_plugins_fx_stem_la_LDFLAGS = $(OP_FIXTURE_LDFLAGS)
tests_plugins_fx_nodesc_la_SOURCES = tests/plugins/fx_bad.c
tests_plugins_fx_nodesc_la_CPPFLAGS = $(AM_CPPFLAGS) -DFX_BAD_NODESC
tests_plugins_fx_nodesc_la_LDFLAGS = $(OP_FIXTURE_LDFLAGS)
tests_plugins_fx_noinit_la_SOURCES = tests/plugins/fx_bad.c
tests_plugins_fx_noinit_la_CPPFLAGS = $(AM_CPPFLAGS) -DFX_BAD_NOINIT
tests_plugins_fx_noinit_la_LDFLAGS = $(OP_FIXTURE_LDFLAGS)
tests_plugins_fx_flags_la_SOURCES = tests/plugins/fx_bad.c
tests_plugins_fx_flags_la_CPPFLAGS = $(AM_CPPFLAGS) -DFX_BAD_FLAGS
tests_plugins_fx_flags_la_LDFLAGS = $(OP_FIXTURE_LDFLAGS)

# loads a plugin with the real loader (used by make check and installcheck)
check_PROGRAMS += tests/plugins/op_ext_check
tests_plugins_op_ext_check_SOURCES = tests/plugins/op_ext_check.c
tests_plugins_op_ext_check_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_plugins_op_ext_check_LDADD = core/libopcore.la
dist_check_SCRIPTS += tests/plugins/sdk_example.sh
TESTS += tests/plugins/sdk_example.sh
# the loader through the oprofiled binary (--list-plugins, --check-config, refusals)
dist_check_SCRIPTS += tests/plugins/cli.sh
TESTS += tests/plugins/cli.sh
