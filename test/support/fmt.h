// The seed's chapter 3 `fmt`: infix printing for tests, so that expected
// tables read like the book's.  x, y, f are PARAM slots 0, 1, 2; i, j, k...
// are RANGE idx 0, 1, 2...
#pragma once
#include <string>

extern "C" {
#include "uopc/uopc.h"
}

std::string fmt(uopc_ctx *c, uopc_node *u);

// Owns a context for a test.
struct Ctx {
  uopc_ctx *c = uopc_ctx_new(nullptr);
  Ctx() { uopc_ctx_set_check(c, 1); }
  ~Ctx() { uopc_ctx_free(c); }
  Ctx(const Ctx &) = delete;
  Ctx &operator=(const Ctx &) = delete;
  operator uopc_ctx *() const { return c; }
  std::string err() const {
    const uopc_error *e = uopc_ctx_error(c);
    return e ? e->msg : "";
  }
};
