// What tests share to get a context and to make its allocator fail.
#pragma once
#include <cstdlib>
#include <string>

extern "C" {
#include "uopc/uopc.h"
}

// Owns a context for a test, with the debug check on (every rule must keep
// dtype and shape).  Converts to uopc_ctx *; err() and code() read the
// recorded error.
struct Ctx {
  uopc_ctx *c;
  explicit Ctx(const uopc_alloc *a = nullptr) : c(uopc_ctx_new(a)) {
    if (c) uopc_ctx_set_check(c, 1);
  }
  ~Ctx() { uopc_ctx_free(c); }
  Ctx(const Ctx &) = delete;
  Ctx &operator=(const Ctx &) = delete;
  operator uopc_ctx *() const { return c; }
  std::string err() const {
    const uopc_error *e = uopc_ctx_error(c);
    return e ? e->msg : "";
  }
  uopc_status code() const {
    const uopc_error *e = uopc_ctx_error(c);
    return e ? e->code : UOPC_OK;
  }
};

// An allocator that fails after `left` more allocations (-1: never) and
// counts the blocks still allocated (live) and the allocation calls.
struct FailAlloc {
  long left = -1;
  long long live = 0;
  long calls = 0;
  static void *fn(void *ud, void *p, size_t old_n, size_t new_n) {
    FailAlloc *a = static_cast<FailAlloc *>(ud);
    (void)old_n;
    if (new_n == 0) {
      if (p) a->live--;
      std::free(p);
      return nullptr;
    }
    a->calls++;
    if (a->left == 0) return nullptr;
    if (a->left > 0) a->left--;
    void *q = std::realloc(p, new_n);
    if (q && !p) a->live++;
    return q;
  }
  uopc_alloc alloc() { return uopc_alloc{fn, this}; }
};
