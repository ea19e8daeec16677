// Calling a compiled plan from tests: random inputs for its PARAM slots and
// its result's bytes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

extern "C" {
#include "uopc/uopc.h"
}

struct Inputs {
  std::vector<std::vector<uint8_t>> data;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<uopc_tensor> args;
};

// Random inputs for every PARAM slot of p (f32 in [-3, 3], i32 in [-100, 100]),
// the same for the same seed.
void MakeInputs(const uopc_plan *p, uint32_t seed, Inputs *in);

// The result bytes of p on in, or "error: LINE:COL: MSG".  aligned: the
// result buffer is 64-byte aligned (the plan's result kernel may then take
// its streaming copy, docs/loops.md), else it is wherever std::string puts it.
std::string Call(const uopc_plan *p, Inputs *in, bool aligned = false);

// The same with the result at `offset` bytes past a 64-byte boundary.
std::string CallAt(const uopc_plan *p, Inputs *in, size_t offset);
