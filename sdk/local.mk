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

# --- models helper: an out-of-tree hardware-model plugin (sdk/examples/vendor-model/),
# built in-tree by make check (tests/integration/model_fallback.sh runs it in
# oprofiled) and against the INSTALLED SDK by installcheck, where the installed
# oprofiled loads it and it must claim the forced cpu type vendor/demo
vendormodeldir = $(docdir)/examples/vendor-model
dist_vendormodel_DATA = sdk/examples/vendor-model/vendor_model.c sdk/examples/vendor-model/Makefile
check_LTLIBRARIES += sdk/examples/vendor-model/vendor_model.la
sdk_examples_vendor_model_vendor_model_la_SOURCES = sdk/examples/vendor-model/vendor_model.c
sdk_examples_vendor_model_vendor_model_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
sdk_examples_vendor_model_vendor_model_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere \
	-no-undefined -Wl,--no-undefined

installcheck_local += vendor-model-installcheck
vendor-model-installcheck:
	test -f '$(DESTDIR)$(vendormodeldir)/vendor_model.c'
	rm -rf vendor-model-build
	mkdir -p vendor-model-build/plugins
	cp '$(srcdir)/sdk/examples/vendor-model/vendor_model.c' \
	  '$(srcdir)/sdk/examples/vendor-model/Makefile' vendor-model-build/
	PKG_CONFIG_PATH='$(DESTDIR)$(libdir)/pkgconfig' PKG_CONFIG_SYSROOT_DIR='$(DESTDIR)' \
	  $(MAKE) -C vendor-model-build -f Makefile CC='$(CC)' PKG_CONFIG='$(PKG_CONFIG)' \
	  CFLAGS='-O2 -Wall -Wextra -Werror' vendor_model.so
	cp vendor-model-build/vendor_model.so vendor-model-build/plugins/vendor_model.so
	chmod 0755 vendor-model-build/plugins
	chmod 0644 vendor-model-build/plugins/vendor_model.so
	d=`pwd`/vendor-model-build; \
	  '$(DESTDIR)$(sbindir)/oprofiled' --plugin-dir="$$d/plugins" --list-plugins > "$$d/list" && \
	  grep 'vendor_model .*SDK 1\.' "$$d/list" && \
	  '$(DESTDIR)$(sbindir)/oprofiled' --plugin-dir="$$d/plugins" --ext-feature=vendor_model \
	    --cpu-type=vendor/demo --session-dir="$$d/s" --events=DEMO_CLOCK:250000 -- true && \
	  grep 'oprofiled: model vendor-demo, cpu type vendor/demo (1000)' "$$d/s/samples/oprofiled.log"
	rm -rf vendor-model-build
.PHONY: vendor-model-installcheck

# --- issue 18: the SDK overview (versions, 1.2's hooks, which services a plugin thread may call) ---
sdkdocdir = $(docdir)/sdk
dist_sdkdoc_DATA = sdk/SDK.md
