/* lib/jit/version.c - the version of the LLVM library in use, from LLVM
 * itself (include/uopc/version.h). */
#include <pthread.h>
#include <stdio.h>

#include <llvm-c/Core.h>

#include "uopc/version.h"

static char llvm_version[32];
static pthread_once_t llvm_version_once = PTHREAD_ONCE_INIT;

static void fill_llvm_version(void) {
  unsigned major = 0, minor = 0, patch = 0;
  LLVMGetVersion(&major, &minor, &patch);
  snprintf(llvm_version, sizeof llvm_version, "%u.%u.%u", major, minor, patch);
}

const char *uopc_llvm_version(void) {
  pthread_once(&llvm_version_once, fill_llvm_version);
  return llvm_version;
}
