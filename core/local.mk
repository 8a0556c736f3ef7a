# core/ - oprofiled
sbin_PROGRAMS += core/oprofiled
core_oprofiled_SOURCES = core/main.c
core_oprofiled_CFLAGS = $(AM_CFLAGS) $(LIBCONFIG_CFLAGS)
core_oprofiled_LDADD = lib/libopng.la $(LIBCONFIG_LIBS) $(PFM_LIBS) $(DL_LIBS)
