#include "support/refeval.h"

#include <cmath>

namespace {

int64_t wrap32(int64_t v) { return (int64_t)(int32_t)(uint32_t)(uint64_t)v; }

bool known_dtype(uint8_t t) { return t == UOPC_DT_BOOL || t == UOPC_DT_I32 || t == UOPC_DT_F32; }

}  // namespace

int RefProg::compile(uopc_node *root) {
  auto it = body_of_.find(root);
  if (it != body_of_.end()) return it->second;
  int id = (int)bodies_.size();
  body_of_[root] = id;
  bodies_.push_back({});
  // iterative post-order over this body's scope (a CALL's body is another)
  std::unordered_map<uopc_node *, int> pos;
  std::vector<std::pair<uopc_node *, uint32_t>> st{{root, 0}};
  std::vector<Ins> ins;
  while (!st.empty()) {
    auto &f = st.back();
    uopc_node *u = f.first;
    uint32_t first = u->op == UOPC_OP_CALL ? 1 : 0;
    if (f.second < first) f.second = first;
    if (f.second < u->nsrc) {
      uopc_node *s = u->src[f.second++];
      if (!pos.count(s)) st.push_back({s, 0});
      continue;
    }
    st.pop_back();
    if (pos.count(u)) continue;
    Ins in;
    in.op = u->op;
    in.dtype = u->dtype;
    if (u->ndim != 0 || !known_dtype(u->dtype)) return -1;
    switch (u->op) {
    case UOPC_OP_CONST:
      if (u->dtype == UOPC_DT_F32) in.fimm = (float)u->arg.f;
      else in.imm = u->arg.i;
      break;
    case UOPC_OP_PARAM:
    case UOPC_OP_RANGE: in.imm = u->arg.i; break;
    case UOPC_OP_CALL: {
      int b = compile(u->src[0]);
      if (b < 0) return -1;
      in.body = b;
      for (uint32_t k = 1; k < u->nsrc; k++) in.args.push_back(pos.at(u->src[k]));
      break;
    }
    default:
      if (!(uopc_op_flags((uopc_op)u->op) & UOPC_OPF_ALU)) return -1;
      if (u->op == UOPC_OP_EXP2 || u->op == UOPC_OP_LOG2 || u->op == UOPC_OP_SIN) return -1;
      for (uint32_t k = 0; k < u->nsrc; k++)
        if (!known_dtype(u->src[k]->dtype)) return -1;
      in.in_dtype = u->src[u->op == UOPC_OP_WHERE ? 1 : 0]->dtype;
      if (u->nsrc > 0) in.a = pos.at(u->src[0]);
      if (u->nsrc > 1) in.b = pos.at(u->src[1]);
      if (u->nsrc > 2) in.d = pos.at(u->src[2]);
    }
    pos[u] = (int)ins.size();
    ins.push_back(std::move(in));
  }
  bodies_[id].ins = std::move(ins);
  return id;
}

bool RefProg::build(uopc_node *root) {
  bodies_.clear();
  body_of_.clear();
  return compile(root) == 0;
}

RefVal RefProg::eval(const RefEnv &env) const {
  std::deque<std::vector<RefVal>> stack;
  return run(0, env, nullptr, stack, 0);
}

RefVal RefProg::run(int body, const RefEnv &env, const std::vector<RefVal> *params,
                    std::deque<std::vector<RefVal>> &stack, size_t depth) const {
  const Body &B = bodies_[body];
  if (stack.size() <= depth) stack.resize(depth + 1);
  std::vector<RefVal> &v = stack[depth];
  v.assign(B.ins.size(), RefVal{});
  for (size_t k = 0; k < B.ins.size(); k++) {
    const Ins &in = B.ins[k];
    RefVal r;
    r.def = true;
    const RefVal *A = in.a >= 0 ? &v[in.a] : nullptr, *Bv = in.b >= 0 ? &v[in.b] : nullptr;
    const RefVal *D = in.d >= 0 ? &v[in.d] : nullptr;
    switch (in.op) {
    case UOPC_OP_CONST: r.i = in.imm, r.f = in.fimm; break;
    case UOPC_OP_RANGE: r.i = env.range.at((size_t)in.imm); break;
    case UOPC_OP_PARAM:
      r = (params ? *params : env.param).at((size_t)in.imm);
      break;
    case UOPC_OP_CALL: {
      std::vector<RefVal> args;
      for (int p : in.args) args.push_back(v[p]);
      r = run(in.body, env, &args, stack, depth + 1);
      break;
    }
    case UOPC_OP_WHERE: {
      if (!A->def) { r.def = false; break; }
      r = A->i ? *Bv : *D;
      break;
    }
    default: {
      if (!A->def || (Bv && !Bv->def)) { r.def = false; break; }
      if (in.in_dtype == UOPC_DT_F32) {
        float a = A->f, b = Bv ? Bv->f : 0;
        switch (in.op) {
        case UOPC_OP_ADD: r.f = a + b; break;
        case UOPC_OP_MUL: r.f = a * b; break;
        case UOPC_OP_MAX: r.f = b > a ? b : a; break;
        case UOPC_OP_CMPLT: r.i = a < b; break;
        case UOPC_OP_CMPNE: r.i = a != b; break;
        case UOPC_OP_RECIP: r.f = a == 0 ? std::copysign(INFINITY, a) : 1.0f / a; break;
        case UOPC_OP_SQRT: r.f = std::sqrt(a); break;
        case UOPC_OP_CAST:
          if (in.dtype == UOPC_DT_BOOL) r.i = a != 0;
          else if (in.dtype == UOPC_DT_F32) r.f = a;
          else if (!(a >= -2147483648.0f && a < 2147483648.0f)) r.def = false;  // NaN too
          else r.i = (int64_t)std::trunc(a);
          break;
        default: r.def = false;
        }
      } else if (in.in_dtype == UOPC_DT_I32) {
        int64_t a = A->i, b = Bv ? Bv->i : 0;
        switch (in.op) {
        case UOPC_OP_ADD: r.i = wrap32(a + b); break;
        case UOPC_OP_MUL: r.i = wrap32(a * b); break;
        case UOPC_OP_MAX: r.i = b > a ? b : a; break;
        case UOPC_OP_CMPLT: r.i = a < b; break;
        case UOPC_OP_CMPNE: r.i = a != b; break;
        case UOPC_OP_FLOORDIV:
        case UOPC_OP_FLOORMOD: {
          if (b == 0 || (a == INT32_MIN && b == -1)) { r.def = false; break; }
          int64_t q = a / b, m = a % b;
          if (m != 0 && ((m < 0) != (b < 0))) q -= 1, m += b;
          r.i = in.op == UOPC_OP_FLOORDIV ? q : m;
          break;
        }
        case UOPC_OP_CAST:
          if (in.dtype == UOPC_DT_BOOL) r.i = a != 0;
          else if (in.dtype == UOPC_DT_F32) r.f = (float)a;
          else r.i = a;
          break;
        default: r.def = false;
        }
      } else {  // bool
        int64_t a = A->i != 0, b = Bv ? Bv->i != 0 : 0;
        switch (in.op) {
        case UOPC_OP_ADD: case UOPC_OP_MAX: r.i = a | b; break;
        case UOPC_OP_MUL: r.i = a & b; break;
        case UOPC_OP_CMPLT: r.i = a < b; break;
        case UOPC_OP_CMPNE: r.i = a != b; break;
        case UOPC_OP_CAST:
          if (in.dtype == UOPC_DT_F32) r.f = (float)a;
          else r.i = a;
          break;
        default: r.def = false;
        }
      }
    }
    }
    if (!r.def) r = RefVal{};
    v[k] = r;
  }
  return v.back();
}
