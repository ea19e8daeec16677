// The seed's chapter 3 `fmt`: infix printing for tests, so that expected
// tables read like the book's.  x, y, f are PARAM slots 0, 1, 2; i, j, k...
// are RANGE idx 0, 1, 2...
#pragma once
#include <string>

extern "C" {
#include "uopc/uopc.h"
}

#include "support/ctx.h"

std::string fmt(uopc_ctx *c, uopc_node *u);
