// Whether the test process runs under valgrind (scripts/valgrind.sh): for the
// few tests that check what valgrind does not emulate.  Each such test skips
// with GTEST_SKIP() << the reason; docs/hardening.md lists them.
#pragma once
#include <cstdlib>
#include <cstring>
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif

inline bool UnderValgrind() {
#ifdef RUNNING_ON_VALGRIND
  if (RUNNING_ON_VALGRIND) return true;
#endif
  // without valgrind's header: its preloaded core library
  const char *p = std::getenv("LD_PRELOAD");
  return p && std::strstr(p, "vgpreload") != nullptr;
}
