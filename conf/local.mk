# conf/ - example configuration and service files
# the fully commented example (owner: loader); tests/unit/test_config parses it
confexampledir = $(docdir)/examples
dist_confexample_DATA = conf/oprofiled.conf
