// Sets an environment variable for a scope (unset again at its end): the
// library reads its UOPC_* tuning variables on each compile.
#ifndef UOPC_TEST_SUPPORT_ENV_H
#define UOPC_TEST_SUPPORT_ENV_H

#include <cstdlib>

struct EnvScope {
  const char *name;
  EnvScope(const char *n, const char *v) : name(n) { setenv(n, v, 1); }
  ~EnvScope() { unsetenv(name); }
};

#endif
