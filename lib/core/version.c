/* lib/core/version.c - the library's version (include/uopc/version.h). */
#include "uopc/version.h"

const char *uopc_version(void) { return UOPC_VERSION_STRING; }
