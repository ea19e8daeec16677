// An independent reference evaluator for scalar programs, written from the
// spec's table (docs/uir.md, "Opcodes and what they compute"), not from
// exec_alu: i32 wraps, floor division and modulo, f32 in C float arithmetic
// (one rounding per op), Python's max, casts as in C with the undefined
// cases reported.  Undefined results are poison: every op on a poison
// operand is poison, except WHERE, which takes the poison of its condition
// and of the arm it selects (docs/semantics.md).
//
// Programs: CONST, PARAM (by slot), RANGE (by idx), the ALU ops on bool,
// i32 and f32 scalars, and CALL (scoped: the body's PARAMs are the call's
// arguments).  A program is flattened once (RefProg::build) and then
// evaluated on many inputs.
#pragma once
#include <cmath>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

extern "C" {
#include "uopc/uopc.h"
}

struct RefVal {
  bool def = false;  // false: poison (undefined)
  int64_t i = 0;     // bool, i32
  float f = 0;       // f32
};

struct RefEnv {
  std::vector<int64_t> range;  // by RANGE idx
  std::vector<RefVal> param;   // by PARAM slot (the top level's PARAMs)
};

inline RefVal ref_i(int64_t v) { return RefVal{true, v, 0}; }
inline RefVal ref_f(float v) { return RefVal{true, 0, v}; }

class RefProg {
 public:
  // Flattens root; false when it holds an op or dtype this evaluator does
  // not know (the caller should not use it then).
  bool build(uopc_node *root);
  RefVal eval(const RefEnv &env) const;

 private:
  struct Ins {
    uint8_t op, dtype, in_dtype;
    int a = -1, b = -1, d = -1;  // positions of the sources in the same body
    int64_t imm = 0;             // CONST (bool/i32), PARAM slot, RANGE idx
    float fimm = 0;              // CONST (f32)
    int body = -1;               // CALL: index of the body
    std::vector<int> args;       // CALL: positions of the arguments
  };
  struct Body {
    std::vector<Ins> ins;  // post-order; the last is the root
  };
  std::vector<Body> bodies_;  // bodies_[0] is the program
  std::unordered_map<uopc_node *, int> body_of_;
  int compile(uopc_node *root);  // -1 on an unknown op
  RefVal run(int body, const RefEnv &env, const std::vector<RefVal> *params, std::deque<std::vector<RefVal>> &stack,
             size_t depth) const;
};

// Value of a bool/i32 result as an int64 (for comparisons).
inline bool ref_same(const RefVal &a, const RefVal &b, uopc_dtype t) {
  if (!a.def || !b.def) return a.def == b.def;
  if (t == UOPC_DT_F32) {
    if (a.f != a.f) return b.f != b.f;  // every NaN is one value
    return a.f == b.f && std::signbit(a.f) == std::signbit(b.f);
  }
  return a.i == b.i;
}
