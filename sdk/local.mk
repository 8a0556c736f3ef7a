# sdk/ - the public plugin ABI
sdkinclude_HEADERS += sdk/oprofile_sdk.h
pkgconfig_DATA += sdk/oprofile-sdk.pc
EXTRA_DIST += sdk/oprofile-sdk.pc.in

# the out-of-tree example plugin (owner: loader): shipped in the docs, built
# in-tree by make check (tests/plugins/sdk_example.sh), and built against the
# INSTALLED header and .pc by installcheck (and so by distcheck)
sdkexampledir = $(docdir)/examples/plugin
dist_sdkexample_DATA = sdk/examples/example.c sdk/examples/Makefile
check_LTLIBRARIES += sdk/examples/example.la
sdk_examples_example_la_SOURCES = sdk/examples/example.c
sdk_examples_example_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
sdk_examples_example_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere -no-undefined \
	-Wl,--no-undefined

installcheck_local += sdk-example-installcheck
sdk-example-installcheck: tests/plugins/op_ext_check$(EXEEXT)
	test -f '$(DESTDIR)$(sdkincludedir)/oprofile_sdk.h'
	test -f '$(DESTDIR)$(libdir)/pkgconfig/oprofile-sdk.pc'
	rm -rf sdk-example-build
	mkdir -p sdk-example-build/plugins
	cp '$(srcdir)/sdk/examples/example.c' '$(srcdir)/sdk/examples/Makefile' sdk-example-build/
	PKG_CONFIG_PATH='$(DESTDIR)$(libdir)/pkgconfig' PKG_CONFIG_SYSROOT_DIR='$(DESTDIR)' \
	  $(MAKE) -C sdk-example-build -f Makefile CC='$(CC)' PKG_CONFIG='$(PKG_CONFIG)' \
	  CFLAGS='-O2 -Wall -Wextra -Werror' example.so
	cp sdk-example-build/example.so sdk-example-build/plugins/example.so
	chmod 0755 sdk-example-build/plugins
	chmod 0644 sdk-example-build/plugins/example.so
	tests/plugins/op_ext_check$(EXEEXT) sdk-example-build/plugins example installcheck
	rm -rf sdk-example-build
.PHONY: sdk-example-installcheck
