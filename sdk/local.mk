# sdk/ - the public plugin ABI
sdkinclude_HEADERS += sdk/oprofile_sdk.h
pkgconfig_DATA += sdk/oprofile-sdk.pc
EXTRA_DIST += sdk/oprofile-sdk.pc.in
