# tests/plugins - fixture plugins for tests/unit/test_ext (owner: loader).
# check_ libraries need an -rpath to be built shared.
OP_FIXTURE_LDFLAGS = -module -avoid-version -shared -rpath /nowhere -no-undefined -Wl,--no-undefined

check_LTLIBRARIES += tests/plugins/fx_all.la tests/plugins/fx_fail.la \
	tests/plugins/fx_clash.la tests/plugins/fx_old.la \
	tests/plugins/fx_major.la tests/plugins/fx_minor.la tests/plugins/fx_small.la \
	tests/plugins/fx_reserved.la tests/plugins/fx_stem.la tests/plugins/fx_nodesc.la \
	tests/plugins/fx_noinit.la tests/plugins/fx_flags.la tests/plugins/fx_invalid.la \
	tests/plugins/fx_mark.la tests/plugins/fx_mark_sysv.la tests/plugins/fx_major_sysv.la \
	tests/plugins/fx_nodel.la
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
# constructors that leave a mark: DT_HASH-only twins for the dynamic-segment reader,
# fx_nodel (-z nodelete) for the /proc/self/fd names
tests_plugins_fx_mark_la_SOURCES = tests/plugins/fx_mark.c
tests_plugins_fx_mark_la_LDFLAGS = $(OP_FIXTURE_LDFLAGS)
tests_plugins_fx_mark_sysv_la_SOURCES = tests/plugins/fx_mark.c
tests_plugins_fx_mark_sysv_la_CPPFLAGS = $(AM_CPPFLAGS) -DFX_SYSV
tests_plugins_fx_mark_sysv_la_LDFLAGS = $(OP_FIXTURE_LDFLAGS) -Wl,--hash-style=sysv
tests_plugins_fx_major_sysv_la_SOURCES = tests/plugins/fx_bad.c
tests_plugins_fx_major_sysv_la_CPPFLAGS = $(AM_CPPFLAGS) -DFX_BAD_MAJOR_SYSV
tests_plugins_fx_major_sysv_la_LDFLAGS = $(OP_FIXTURE_LDFLAGS) -Wl,--hash-style=sysv
tests_plugins_fx_nodel_la_SOURCES = tests/plugins/fx_mark.c
tests_plugins_fx_nodel_la_CPPFLAGS = $(AM_CPPFLAGS) -DFX_NODEL
tests_plugins_fx_nodel_la_LDFLAGS = $(OP_FIXTURE_LDFLAGS) -Wl,-z,nodelete

# loads a plugin with the real loader (used by make check and installcheck)
check_PROGRAMS += tests/plugins/op_ext_check
tests_plugins_op_ext_check_SOURCES = tests/plugins/op_ext_check.c
tests_plugins_op_ext_check_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_plugins_op_ext_check_LDADD = core/libopload.la lib/libopng.la
# the attacker of swap_race.sh: renameat2(RENAME_EXCHANGE) in a loop
check_PROGRAMS += tests/plugins/op_exchange
tests_plugins_op_exchange_SOURCES = tests/plugins/op_exchange.c
dist_check_SCRIPTS += tests/plugins/sdk_example.sh
TESTS += tests/plugins/sdk_example.sh
# the loader through the oprofiled binary (--list-plugins, --check-config, refusals)
dist_check_SCRIPTS += tests/plugins/cli.sh
TESTS += tests/plugins/cli.sh
# as root: a user-owned ancestor of the plugin dir, swapped under --list-plugins
dist_check_SCRIPTS += tests/plugins/swap_race.sh
TESTS += tests/plugins/swap_race.sh
