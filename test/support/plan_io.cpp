// Calling a compiled plan from tests (plan_io.h).
#include "support/plan_io.h"

#include <cstdlib>
#include <cstring>
#include <random>

void MakeInputs(const uopc_plan *p, uint32_t seed, Inputs *in) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uf(-3.0f, 3.0f);
  uint32_t n = uopc_plan_nargs(p);
  in->data.resize(n), in->shapes.resize(n), in->args.resize(n);
  for (uint32_t s = 0; s < n; s++) {
    uopc_dtype t = UOPC_DT_F32;
    uint32_t nd = 0;
    const int64_t *shape = nullptr;
    if (!uopc_plan_arg(p, s, &t, &nd, &shape)) continue;
    in->shapes[s].assign(shape, shape + nd);
    int64_t numel = 1;
    for (uint32_t d = 0; d < nd; d++) numel *= shape[d];
    in->data[s].resize((size_t)numel * 4 + 4);
    for (int64_t k = 0; k < numel; k++) {
      if (t == UOPC_DT_F32) {
        float f = uf(rng);
        memcpy(&in->data[s][k * 4], &f, 4);
      } else {
        int32_t i = (int32_t)(rng() % 201) - 100;
        memcpy(&in->data[s][k * 4], &i, 4);
      }
    }
    in->args[s] = {in->data[s].data(), t, nd, in->shapes[s].data()};
  }
}

static std::string CallWith(const uopc_plan *p, Inputs *in, bool aligned, size_t offset) {
  uopc_dtype t;
  uint32_t nd;
  const int64_t *shape;
  if (!uopc_plan_result(p, &t, &nd, &shape)) return "error: no result";
  int64_t numel = 1;
  for (uint32_t d = 0; d < nd; d++) numel *= shape[d];
  std::string out((size_t)numel * uopc_dtype_size(t), '\0');
  void *mem = aligned ? aligned_alloc(64, (out.size() + offset + 64) / 64 * 64) : nullptr;
  if (aligned && !mem) return "error: out of memory";
  uopc_tensor o = {mem ? (char *)mem + offset : out.empty() ? (void *)in : (void *)out.data(), t, nd, shape};
  uopc_error e;
  uopc_status st = uopc_plan_call(p, in->args.data(), (uint32_t)in->args.size(), &o, &e);
  if (mem && st == UOPC_OK) memcpy(&out[0], (char *)mem + offset, out.size());
  free(mem);
  if (st != UOPC_OK) return "error: " + std::to_string(e.line) + ":" + std::to_string(e.col) + ": " + e.msg;
  return out;
}

std::string Call(const uopc_plan *p, Inputs *in, bool aligned) { return CallWith(p, in, aligned, 0); }

std::string CallAt(const uopc_plan *p, Inputs *in, size_t offset) { return CallWith(p, in, true, offset); }
