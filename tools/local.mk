# tools/ - opreport, ophelp, opcontrol, opcount
# opcount: event counting for a command/process/thread/system (issue 8)
bin_PROGRAMS += tools/opcount
tools_opcount_SOURCES = tools/opcount.c
tools_opcount_LDADD = lib/libopcount.la
