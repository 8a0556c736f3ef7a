# conf/ - example configuration and service files
# the fully commented example (owner: loader); tests/unit/test_config parses it
confexampledir = $(docdir)/examples
dist_confexample_DATA = conf/oprofiled.conf

# service files (owner: deploy). The systemd unit gets the install paths at
# make time; it goes to $(prefix)/lib/systemd/system unless overridden, e.g.
# make install systemdsystemunitdir=$(pkg-config --variable=systemdsystemunitdir systemd)
systemdsystemunitdir = $(prefix)/lib/systemd/system
systemdsystemunit_DATA = conf/oprofiled.service
# the logrotate snippet (uses SIGHUP) is an example: copy it to /etc/logrotate.d/
dist_confexample_DATA += conf/oprofiled.logrotate
EXTRA_DIST += conf/oprofiled.service.in
CLEANFILES += conf/oprofiled.service
conf/oprofiled.service: $(top_srcdir)/conf/oprofiled.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) conf && $(SED) -e 's|@sbindir[@]|$(sbindir)|g' \
		-e 's|@bindir[@]|$(bindir)|g' -e 's|@sysconfigfile[@]|$(sysconfigfile)|g' \
		$(top_srcdir)/conf/oprofiled.service.in > $@.tmp && mv $@.tmp $@
# --- issue 20: the fleet profile (99 Hz, rotation, call graphs, cgroup labels); tests/integration/fleet*.sh read it ---
dist_confexample_DATA += conf/fleet.conf
