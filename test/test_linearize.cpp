// The linearize stage (lib/lower/linearize.h): the program a kernel
// becomes, where its values are placed (hoisting, read-after-write through
// buffers, guarded indices, reuse), deep nests, the errors, and the
// verifier catching broken programs.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "lower/linearize.h"
#include "support/fmt.h"

namespace {

struct Prog {
  uopi_prog p{};
  ~Prog() { uopi_prog_free(&p); }
};

// Prepares and linearizes root; the program must verify.
void Linearize(uopc_ctx *c, uopc_node *root, Prog &out) {
  uopi_kernel_ir k;
  ASSERT_NE(root, nullptr);
  ASSERT_EQ(uopi_kernel_prepare(c, root, &k), UOPC_OK) << uopc_ctx_error(c)->msg;
  ASSERT_EQ(uopi_linearize(c, &k, &out.p), UOPC_OK) << uopc_ctx_error(c)->msg;
  const char *why = nullptr;
  uint32_t at = 0;
  ASSERT_EQ(uopi_prog_verify(&out.p, &why, &at), 0) << why << " at %" << at;
}

uopc_node *Parse(uopc_ctx *c, const std::string &text) {
  uopc_error e{};
  uopc_node *r = uopc_uir_parse(c, text.data(), text.size(), "test.uir", &e);
  EXPECT_NE(r, nullptr) << e.line << ":" << e.col << ": " << e.msg;
  return r;
}

// The program as the debug dump prints it.
std::string Dump(const uopi_prog &p) {
  char *buf = nullptr;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  uopi_prog_print(&p, f);
  std::fclose(f);
  std::string s(buf, n);
  std::free(buf);
  return s;
}

// Instructions that compute op (VALUE) from slot (-1: any).
std::vector<uint32_t> Find(const uopi_prog &p, uopc_op op, int slot = -1) {
  std::vector<uint32_t> v;
  for (uint32_t i = 0; i < p.n; i++)
    if (p.ins[i].kind == UOPI_P_VALUE && p.ins[i].op == op && (slot < 0 || p.ins[i].slot == slot)) v.push_back(i);
  return v;
}

// The LOOP of the RANGE with this idx.
uint32_t LoopOf(const uopi_prog &p, int64_t idx) {
  for (uint32_t i = 0; i < p.n; i++)
    if (p.ins[i].kind == UOPI_P_LOOP && p.ins[i].node->arg.i == idx) return i;
  ADD_FAILURE() << "no loop of range idx=" << idx;
  return 0;
}

uopc_node *Matmul(uopc_ctx *x, int n) {
  uopc_node *C = uopc_buffer(x, 0, UOPC_DT_F32, n * n), *A = uopc_buffer(x, 1, UOPC_DT_F32, n * n),
            *B = uopc_buffer(x, 2, UOPC_DT_F32, n * n);
  uopc_node *N = uopc_const_i(x, UOPC_DT_I32, n);
  uopc_node *i = uopc_range(x, N, 0), *kk = uopc_range(x, N, 1), *j = uopc_range(x, N, 2);
  uopc_node *ij = uopc_add(x, uopc_mul_k(x, i, n), j), *ik = uopc_add(x, uopc_mul_k(x, i, n), kk),
            *kj = uopc_add(x, uopc_mul_k(x, kk, n), j);
  uopc_node *pc = uopc_index(x, C, &ij, 1);
  uopc_node *prod = uopc_mul(x, uopc_load(x, uopc_index(x, A, &ik, 1)), uopc_load(x, uopc_index(x, B, &kj, 1)));
  uopc_node *st = uopc_store(x, pc, uopc_add(x, uopc_load(x, pc), prod));
  uopc_node *r[3] = {i, kk, j};
  uopc_node *e = uopc_end(x, st, r, 3);
  return uopc_sink(x, &e, 1);
}

// In the i, k, j matmul, a[i,k] does not depend on j: it is loaded in the k
// loop, in front of the j loop; b[k,j] and c[i,j] are loaded in the j loop
// (c is stored there).  i*n is computed in the i loop, once.
TEST(Linearize, MatmulHoistsWhatTheInnerLoopDoesNotChange) {
  Ctx c;
  Prog P;
  Linearize(c, Matmul(c, 8), P);
  const uopi_prog &p = P.p;
  EXPECT_EQ(p.max_depth, 3u);
  uint32_t lj = LoopOf(p, 2);
  auto la = Find(p, UOPC_OP_LOAD, 1), lb = Find(p, UOPC_OP_LOAD, 2), lc = Find(p, UOPC_OP_LOAD, 0);
  ASSERT_EQ(la.size(), 1u);
  ASSERT_EQ(lb.size(), 1u);
  ASSERT_EQ(lc.size(), 1u);
  EXPECT_EQ(p.ins[la[0]].depth, 2u) << Dump(p);
  EXPECT_LT(la[0], lj) << Dump(p);
  EXPECT_EQ(p.ins[lb[0]].depth, 3u);
  EXPECT_EQ(p.ins[lc[0]].depth, 3u);
  auto muls = Find(p, UOPC_OP_MUL);
  int imul_n = 0;  // i*8 (shared by i*8+k and i*8+j)
  for (uint32_t m : muls)
    if (p.ins[m].dtype == UOPC_DT_I32 && p.ins[m].node->src[0]->op == UOPC_OP_RANGE && p.ins[m].node->src[0]->arg.i == 0) {
      imul_n++;
      EXPECT_EQ(p.ins[m].depth, 1u) << Dump(p);
    }
  EXPECT_EQ(imul_n, 1) << Dump(p);
  EXPECT_EQ(Find(p, UOPC_OP_CONST).size(), 1u) << "8 is one constant, made once: " << Dump(p);
  EXPECT_EQ(p.ins[Find(p, UOPC_OP_CONST)[0]].depth, 0u);
}

// A[0] read before the loop that writes A[i] is read again inside it, after
// the loop opens (iteration i reads what iteration 0 wrote), and O[0] =
// A[0] + 1 after the loop reads it a third time.
TEST(Linearize, ReadAfterWriteMakesLoadsAnew) {
  Ctx c;
  Prog P;
  Linearize(c, Parse(c, R"(
%A = buffer : slot=0 dtype=i32 shape=(4,)
%O = buffer : slot=1 dtype=i32 shape=(4,)
%z = index %A, 0
%x = load %z
%y = add %x, 1
%o0 = index %O, 0
%s0 = store %o0, %y
%i = range 4 : idx=0
%ai = index %A, %i
%s1 = store %ai, %y
%e = end %s1, %i
%s2 = store %o0, %y
%k = sink %s0, %e, %s2
)"),
            P);
  const uopi_prog &p = P.p;
  auto loads = Find(p, UOPC_OP_LOAD, 0);
  ASSERT_EQ(loads.size(), 3u) << Dump(p);
  uint32_t loop = LoopOf(p, 0);
  EXPECT_LT(loads[0], loop);
  EXPECT_GT(loads[1], loop);
  EXPECT_EQ(p.ins[loads[1]].depth, 1u) << Dump(p);
  EXPECT_EQ(p.ins[loads[2]].depth, 0u) << Dump(p);
  EXPECT_EQ(Find(p, UOPC_OP_ADD).size(), 3u) << "y depends on the load: made anew each time: " << Dump(p);
  EXPECT_EQ(Find(p, UOPC_OP_INDEX, 0).size(), 2u) << "A[0]'s address is made once, A[i] once: " << Dump(p);
}

// Within a loop body, a read after a write to the same buffer reads memory
// again: O[i] = A[i], then P[i] = A[i] + O[i] loads O[i] after that store,
// and A[i] once, before it.
TEST(Linearize, ReadAfterWriteWithinAnIteration) {
  Ctx c;
  Prog P;
  Linearize(c, Parse(c, R"(
%A = buffer : slot=0 dtype=f32 shape=(16,)
%O = buffer : slot=1 dtype=f32 shape=(16,)
%P = buffer : slot=2 dtype=f32 shape=(16,)
%i = range 16 : idx=0
%pa = index %A, %i
%a = load %pa
%po = index %O, %i
%o = load %po
%s1 = store %po, %a
%v = add %a, %o
%pp = index %P, %i
%s2 = store %pp, %v
%b = sink %s1, %s2
%e = end %b, %i
%k = sink %e
)"),
            P);
  const uopi_prog &p = P.p;
  auto lo = Find(p, UOPC_OP_LOAD, 1), la = Find(p, UOPC_OP_LOAD, 0);
  ASSERT_EQ(lo.size(), 1u) << Dump(p);
  ASSERT_EQ(la.size(), 1u) << Dump(p);
  uint32_t first_store = 0;
  for (uint32_t i = 0; i < p.n && !first_store; i++)
    if (p.ins[i].kind == UOPI_P_STORE) first_store = i;
  EXPECT_GT(lo[0], first_store) << Dump(p);
  EXPECT_LT(la[0], first_store) << Dump(p);
}

// An index that bounds do not prove inside its buffer is checked where it is
// needed, inside the loop, even when it does not depend on the loop: the
// check can end the kernel, so it keeps its place among the stores.
TEST(Linearize, GuardedIndexStaysWhereItIsNeeded) {
  Ctx c;
  Prog P;
  Linearize(c, Parse(c, R"(
%A = buffer : slot=0 dtype=f32 shape=(16,)
%B = buffer : slot=1 dtype=i32 shape=(1,)
%O = buffer : slot=2 dtype=f32 shape=(16,)
%i = range 16 : idx=0
%pb = index %B, 0
%b = load %pb
%pa = index %A, %b
%a = load %pa
%po = index %O, %i
%s = store %po, %a
%e = end %s, %i
%k = sink %e
)"),
            P);
  const uopi_prog &p = P.p;
  auto ia = Find(p, UOPC_OP_INDEX, 0), lb = Find(p, UOPC_OP_LOAD, 1);
  ASSERT_EQ(ia.size(), 1u);
  ASSERT_EQ(lb.size(), 1u);
  EXPECT_TRUE(p.ins[ia[0]].flags & UOPI_PF_GUARD);
  EXPECT_EQ(p.ins[ia[0]].depth, 1u) << Dump(p);
  EXPECT_EQ(p.ins[lb[0]].depth, 0u) << "B[0] is in bounds and B is not written: hoisted\n" << Dump(p);
  EXPECT_FALSE(p.ins[Find(p, UOPC_OP_INDEX, 2)[0]].flags & UOPI_PF_GUARD);
}

// A value two sibling loops need is made once, in front of the first.
TEST(Linearize, SiblingLoopsShareAnInvariantValue) {
  Ctx c;
  uopc_ctx *x = c;
  uopc_node *A = uopc_buffer(x, 0, UOPC_DT_F32, 8), *O = uopc_buffer(x, 1, UOPC_DT_F32, 8);
  uopc_node *zero = uopc_const_i(x, UOPC_DT_I32, 0);
  uopc_node *s = uopc_alu1(x, UOPC_OP_SQRT, uopc_load(x, uopc_index(x, A, &zero, 1)));
  uopc_node *i = uopc_range(x, uopc_const_i(x, UOPC_DT_I32, 8), 0), *j = uopc_range(x, uopc_const_i(x, UOPC_DT_I32, 8), 1);
  uopc_node *e1 = uopc_end(x, uopc_store(x, uopc_index(x, O, &i, 1), s), &i, 1);
  uopc_node *e2 = uopc_end(x, uopc_store(x, uopc_index(x, O, &j, 1), uopc_add(x, s, s)), &j, 1);
  uopc_node *effects[2] = {e1, e2};
  Prog P;
  Linearize(c, uopc_sink(x, effects, 2), P);
  const uopi_prog &p = P.p;
  auto sq = Find(p, UOPC_OP_SQRT);
  ASSERT_EQ(sq.size(), 1u) << Dump(p);
  EXPECT_EQ(p.ins[sq[0]].depth, 0u);
  EXPECT_LT(sq[0], LoopOf(p, 0));
  EXPECT_EQ(Find(p, UOPC_OP_ADD).size(), 1u);
}

// 10,000 nested loops of 2 (never run: only linearized), and the program
// verifies; nothing recursed.
TEST(Linearize, TenThousandNestedLoops) {
  constexpr int kDepth = 10000;
  Ctx c;
  uopc_ctx *x = c;
  uopc_node *O = uopc_buffer(x, 0, UOPC_DT_I32, 1), *zero = uopc_const_i(x, UOPC_DT_I32, 0);
  uopc_node *p0 = uopc_index(x, O, &zero, 1);
  uopc_node *e = uopc_store(x, p0, uopc_add_k(x, uopc_load(x, p0), 1));
  for (int d = kDepth - 1; d >= 0; d--) {
    uopc_node *r = uopc_range(x, uopc_const_i(x, UOPC_DT_I32, 2), d);
    e = uopc_end(x, e, &r, 1);
  }
  Prog P;
  Linearize(c, uopc_sink(x, &e, 1), P);
  EXPECT_EQ(P.p.max_depth, (uint32_t)kDepth);
  auto ld = Find(P.p, UOPC_OP_LOAD, 0);
  ASSERT_EQ(ld.size(), 1u);
  EXPECT_EQ(P.p.ins[ld[0]].depth, (uint32_t)kDepth) << "O is stored in every loop";
  EXPECT_EQ(Find(P.p, UOPC_OP_INDEX, 0).size(), 1u);
  EXPECT_EQ(P.p.ins[Find(P.p, UOPC_OP_INDEX, 0)[0]].depth, 0u) << "O[0]'s address is invariant";
}

TEST(Linearize, ErrorsAreReported) {
  Ctx c;
  uopc_ctx *x = c;
  uopi_kernel_ir k;
  uopi_prog p;
  // a RANGE whose END does not close the store that uses it
  uopc_node *O = uopc_buffer(x, 0, UOPC_DT_I32, 4), *P = uopc_buffer(x, 1, UOPC_DT_I32, 4);
  uopc_node *i = uopc_range(x, uopc_const_i(x, UOPC_DT_I32, 4), 7);
  uopc_node *zero = uopc_const_i(x, UOPC_DT_I32, 0);
  uopc_node *inner = uopc_end(x, uopc_store(x, uopc_index(x, P, &zero, 1), zero), &i, 1);
  uopc_node *outside = uopc_store(x, uopc_index(x, O, &i, 1), zero);
  uopc_node *effects[2] = {inner, outside};
  ASSERT_EQ(uopi_kernel_prepare(x, uopc_sink(x, effects, 2), &k), UOPC_OK) << c.err();
  EXPECT_EQ(uopi_linearize(x, &k, &p), UOPC_ERR_TYPE);
  EXPECT_NE(c.err().find("RANGE idx=7 is used outside the loops"), std::string::npos) << c.err();
  uopi_prog_free(&p);
  uopc_ctx_clear_error(x);
  // a loop opened inside itself
  uopc_node *st = uopc_store(x, uopc_index(x, O, &i, 1), zero);
  uopc_node *in = uopc_end(x, st, &i, 1);
  uopc_node *out = uopc_end(x, in, &i, 1);
  ASSERT_EQ(uopi_kernel_prepare(x, uopc_sink(x, &out, 1), &k), UOPC_OK) << c.err();
  EXPECT_EQ(uopi_linearize(x, &k, &p), UOPC_ERR_TYPE);
  EXPECT_NE(c.err().find("RANGE idx=7 is opened again inside its own loop"), std::string::npos) << c.err();
  uopi_prog_free(&p);
}

// Programs broken by hand: the verifier says what is wrong.
TEST(Linearize, VerifierCatchesBrokenPrograms) {
  Ctx c;
  Prog P;
  Linearize(c, Parse(c, R"(
%A = buffer : slot=0 dtype=i32 shape=(4,)
%z = index %A, 0
%x = load %z
%i = range 4 : idx=0
%ai = index %A, %i
%y = add %x, 1
%s1 = store %ai, %y
%e = end %s1, %i
%k = sink %e
)"),
            P);
  uopi_prog &p = P.p;
  const char *why = nullptr;
  uint32_t at = 0;
  auto loads = Find(p, UOPC_OP_LOAD, 0);
  ASSERT_EQ(loads.size(), 1u) << Dump(p);
  ASSERT_EQ(p.ins[loads[0]].depth, 1u) << "A is stored in the loop: A[0] is read in it\n" << Dump(p);
  // the add reads the load; make a copy of the program where the load sits
  // in front of the loop instead (what the emitter before linearize did)
  std::vector<uopi_pinst> saved(p.ins, p.ins + p.n);
  uint32_t loop = LoopOf(p, 0);
  {
    // move the LOAD (and its INDEX, which precedes it) before the LOOP: rotate [loop, load] right by one
    std::vector<uopi_pinst> v(saved);
    uint32_t l = loads[0];
    uopi_pinst ld = v[l];
    ld.depth = 0;
    for (uint32_t i = l; i > loop; i--) v[i] = v[i - 1];
    v[loop] = ld;
    for (auto &ins : v)
      for (uint32_t j = 0; j < ins.nsrc; j++) {
        if (ins.src[j] == l) ins.src[j] = loop;
        else if (ins.src[j] >= loop && ins.src[j] < l) ins.src[j]++;
      }
    std::copy(v.begin(), v.end(), p.ins);
    EXPECT_EQ(uopi_prog_verify(&p, &why, &at), 1) << Dump(p);
    EXPECT_STREQ(why, "a value that read a buffer is used after a store to it");
  }
  {
    std::vector<uopi_pinst> v(saved);  // an operand that comes later
    v[loads[0]].src[0] = p.n - 1;
    std::copy(v.begin(), v.end(), p.ins);
    EXPECT_EQ(uopi_prog_verify(&p, &why, &at), 1);
    EXPECT_STREQ(why, "an operand is not an earlier instruction");
    EXPECT_EQ(at, loads[0]);
  }
  {
    std::vector<uopi_pinst> v(saved);  // a wrong depth
    v[loads[0]].depth = 0;
    std::copy(v.begin(), v.end(), p.ins);
    EXPECT_EQ(uopi_prog_verify(&p, &why, &at), 1);
    EXPECT_STREQ(why, "depth is not the number of open loops");
  }
  {
    std::vector<uopi_pinst> v(saved);  // a loop never closed
    v.back().kind = UOPI_P_VALUE;
    v.back().op = UOPC_OP_CONST;
    v.back().nsrc = 0;
    std::copy(v.begin(), v.end(), p.ins);
    EXPECT_EQ(uopi_prog_verify(&p, &why, &at), 1);
  }
  std::copy(saved.begin(), saved.end(), p.ins);
  EXPECT_EQ(uopi_prog_verify(&p, &why, &at), 0) << why;
  // the dump: one line an instruction, indented by depth
  std::string d = Dump(p);
  EXPECT_NE(d.find("loop %"), std::string::npos) << d;
  EXPECT_NE(d.find("\n    %"), std::string::npos) << d;
  EXPECT_NE(d.find("endloop %"), std::string::npos) << d;
}

}  // namespace
