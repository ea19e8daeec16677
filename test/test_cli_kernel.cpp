// The kernel verbs of the command-line tool, run as a program: compile
// (--emit=llvm|asm), exec on .npy files, fuzz.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "uopc/uopc.h"
#include "support/cli.h"

namespace {

bool Exists(const std::string &path) {
  struct stat sb;
  return stat(path.c_str(), &sb) == 0;
}

std::string Tmp(const std::string &name) { return TmpPath(name); }
std::string Example(const char *name) { return ExamplePath(name); }

std::vector<float> Range32() {
  std::vector<float> a(32);
  for (int i = 0; i < 32; i++) a[i] = (float)i * 0.25f - 3.0f;
  return a;
}

TEST(CliExec, CopyKernelCopies) {
  std::string in = Tmp("A.npy"), out = Tmp("O.npy");
  std::remove(out.c_str());
  SaveNpy(in, UOPC_DT_F32, Range32());
  for (const char *tier : {"", " --tier=strong", " --tier fast"}) {
    CliRun r = Uopc("exec " + Q(Example("copy_kernel.uir")) + " --arg 0=" + Q(in) + " --out 1=" + Q(out) + tier);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(LoadNpy<float>(out, UOPC_DT_F32), Range32());
    std::remove(out.c_str());
  }
  std::remove(in.c_str());
}

// --print shows each --out buffer at its dtype's precision; the bundled input works.
TEST(CliExec, PrintShowsTheOutputs) {
  std::string out = Tmp("P.npy");
  CliRun r = Uopc("exec " + Q(Example("copy_kernel.uir")) + " --arg 0=" + Q(Example("copy_in.npy")) + " --out 1=" +
                  Q(out) + " --print");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string want = "slot 1: [";
  for (int i = 0; i < 32; i++) want += std::string(i ? ", " : "") + std::to_string(i / 2) + (i % 2 ? ".5" : ".0");
  EXPECT_EQ(r.out, want + "]\n");
  std::remove(out.c_str());
}

const char *kAccum = R"(# O[i] = O[i] + A[i]
%A = buffer : slot=0 dtype=i32 shape=(5,)
%O = buffer : slot=1 dtype=i32 shape=(5,)
%i = range 5 : idx=0
%pa = index %A, %i
%a = load %pa
%po = index %O, %i
%o = load %po
%v = add %o, %a
%st = store %po, %v
%e = end %st, %i
%k = sink %e
)";

// --arg and --out on one slot: read, updated in place, written; --out alone:
// the buffer starts zeroed.
TEST(CliExec, InPlaceAndZeroedOutputs) {
  std::string prog = Tmp("accum.uir"), a = Tmp("acc_a.npy"), o = Tmp("acc_o.npy");
  Spit(prog, kAccum);
  SaveNpy(a, UOPC_DT_I32, std::vector<int32_t>{1, -2, 3, INT32_MAX, 5});
  SaveNpy(o, UOPC_DT_I32, std::vector<int32_t>{10, 20, 30, 1, 50});
  CliRun r = Uopc("exec " + Q(prog) + " --arg 0=" + Q(a) + " --arg 1=" + Q(o) + " --out 1=" + Q(o));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(LoadNpy<int32_t>(o, UOPC_DT_I32), (std::vector<int32_t>{11, 18, 33, INT32_MIN, 55}));
  std::remove(o.c_str());
  r = Uopc("exec " + Q(prog) + " --out=1=" + Q(o) + " --arg=0=" + Q(a));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(LoadNpy<int32_t>(o, UOPC_DT_I32), (std::vector<int32_t>{1, -2, 3, INT32_MAX, 5}));
  for (auto &f : {prog, a, o}) std::remove(f.c_str());
}

TEST(CliExec, BoolAndF16Buffers) {
  std::string prog = Tmp("bf.uir"), a = Tmp("bf_a.npy"), c = Tmp("bf_c.npy"), o = Tmp("bf_o.npy");
  Spit(prog, R"(%A = buffer : slot=0 dtype=f16 shape=(4,)
%C = buffer : slot=1 dtype=bool shape=(4,)
%O = buffer : slot=2 dtype=f16 shape=(4,)
%i = range 4 : idx=0
%pa = index %A, %i
%a = load %pa
%pc = index %C, %i
%c = load %pc
%d = add %a, %a
%w = where %c, %d, %a
%po = index %O, %i
%st = store %po, %w
%e = end %st, %i
%k = sink %e
)");
  SaveNpy(a, UOPC_DT_F16, std::vector<uint16_t>{0x3c00, 0x7bff, 0xc000, 0x0001});
  SaveNpy(c, UOPC_DT_BOOL, std::vector<uint8_t>{1, 1, 0, 1});
  CliRun r = Uopc("exec " + Q(prog) + " --arg 0=" + Q(a) + " --arg 1=" + Q(c) + " --out 2=" + Q(o));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(LoadNpy<uint16_t>(o, UOPC_DT_F16), (std::vector<uint16_t>{0x4000, 0x7c00, 0xc000, 0x0002}));
  for (auto &f : {prog, a, c, o}) std::remove(f.c_str());
}

// Every error: exit 1, a FILE: error: line, and no output file written (an
// existing one is left as it was).
TEST(CliExec, ErrorsWriteNothing) {
  std::string k = Q(Example("copy_kernel.uir"));
  std::string in = Tmp("e_in.npy"), out = Tmp("e_out.npy"), bad = Tmp("e_bad.npy");
  SaveNpy(in, UOPC_DT_F32, Range32());
  Spit(out, "precious");
  struct Case {
    std::string args, err;
  };
  SaveNpy(Tmp("e_short.npy"), UOPC_DT_F32, std::vector<float>{1, 2, 3});
  SaveNpy(Tmp("e_i32.npy"), UOPC_DT_I32, std::vector<int32_t>(32));
  SaveNpy(Tmp("e_2d.npy"), UOPC_DT_F32, std::vector<float>(32), {4, 8});
  std::string f8 = Slurp(Tmp("e_short.npy"));
  f8.replace(f8.find("'<f4'"), 5, "'<f8'");
  Spit(Tmp("e_f8.npy"), f8);
  Spit(Tmp("e_trunc.npy"), Slurp(in).substr(0, 140));
  const Case cases[] = {
      {"--arg 0=" + Q(Tmp("e_short.npy")) + " --out 1=" + Q(out),
       Tmp("e_short.npy") + ": error: shape (3,) does not match BUFFER slot 0 shape (32,)\n"},
      {"--arg 0=" + Q(Tmp("e_2d.npy")) + " --out 1=" + Q(out),
       Tmp("e_2d.npy") + ": error: shape (4, 8) does not match BUFFER slot 0 shape (32,)\n"},
      {"--arg 0=" + Q(Tmp("e_i32.npy")) + " --out 1=" + Q(out),
       Tmp("e_i32.npy") + ": error: dtype <i4 (i32) does not match BUFFER slot 0 dtype f32 (<f4)\n"},
      {"--arg 0=" + Q(Tmp("e_f8.npy")) + " --out 1=" + Q(out),
       Tmp("e_f8.npy") + ": error: dtype <f8 is not supported (bool |b1, i32 <i4, f32 <f4, f16 <f2)\n"},
      {"--arg 0=" + Q(Tmp("e_trunc.npy")) + " --out 1=" + Q(out),
       Tmp("e_trunc.npy") +
           ": error: truncated data: the header says 32 elements (128 bytes), the file has 12 bytes of data\n"},
      {"--arg 0=" + Q(Tmp("e_none.npy")) + " --out 1=" + Q(out),
       Tmp("e_none.npy") + ": error: cannot open: No such file or directory\n"},
      {"--arg 0=" + Q(in), Example("copy_kernel.uir") +
                               ": error: BUFFER slot 1 (f32, shape (32,)) is given by neither --arg 1=IN.npy nor "
                               "--out 1=OUT.npy\n"},
      {"--arg 0=" + Q(in) + " --out 1=" + Q(out) + " --out 2=" + Q(bad),
       Example("copy_kernel.uir") + ": error: --out 2=: the kernel has no BUFFER slot 2 (its slots are 0..1)\n"},
      {"--arg 0=" + Q(in) + " --out 1=" + Q(Tmp("no/such/dir/o.npy")),
       Tmp("no/such/dir/o.npy") + ": error: cannot create a file next to it: No such file or directory\n"},
  };
  for (const Case &c : cases) {
    CliRun r = Uopc("exec " + k + " " + c.args);
    EXPECT_EQ(r.status, 1) << c.args;
    EXPECT_EQ(r.err, c.err) << c.args;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(Slurp(out), "precious") << c.args;
    EXPECT_FALSE(Exists(bad));
  }
  for (const char *f : {"e_short.npy", "e_i32.npy", "e_2d.npy", "e_f8.npy", "e_trunc.npy"}) std::remove(Tmp(f).c_str());
  std::remove(in.c_str());
  std::remove(out.c_str());
}

// An index out of bounds at run time: exit 1 and no output, even for the
// slots written before the failure.
TEST(CliExec, RuntimeErrorWritesNothing) {
  std::string prog = Tmp("oob.uir"), idx = Tmp("oob_i.npy"), o = Tmp("oob_o.npy");
  Spit(prog, R"(%I = buffer : slot=0 dtype=i32 shape=(3,)
%O = buffer : slot=1 dtype=f32 shape=(4,)
%i = range 3 : idx=0
%pi = index %I, %i
%x = load %pi
%po = index %O, %x
%st = store %po, 1.0
%e = end %st, %i
%k = sink %e
)");
  SaveNpy(idx, UOPC_DT_I32, std::vector<int32_t>{0, 1, 4});
  std::remove(o.c_str());
  CliRun r = Uopc("exec " + Q(prog) + " --arg 0=" + Q(idx) + " --out 1=" + Q(o));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, prog + ": error: kernel index out of bounds in BUFFER slot 1 (of 4 elements)\n");
  EXPECT_FALSE(Exists(o));
  SaveNpy(idx, UOPC_DT_I32, std::vector<int32_t>{0, 1, 3});
  r = Uopc("exec " + Q(prog) + " --arg 0=" + Q(idx) + " --out 1=" + Q(o));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(LoadNpy<float>(o, UOPC_DT_F32), (std::vector<float>{1, 1, 0, 1}));
  for (auto &f : {prog, idx, o}) std::remove(f.c_str());
}

TEST(CliExec, UsageErrors) {
  std::string k = Q(Example("copy_kernel.uir"));
  for (const char *args : {"", " --arg", " --arg 0", " --arg =a.npy", " --arg x=a.npy", " --arg 0=", " --arg -1=a.npy",
                           " --arg 0=a.npy --arg 0=b.npy", " --out 0=a.npy --out 1=a.npy", " --tier=slow",
                           " --frobnicate", " a.uir"}) {
    CliRun r = Uopc(std::string("exec ") + (args[0] ? k : "") + args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.err;
    EXPECT_NE(r.err.find("uopc exec: "), std::string::npos) << r.err;
  }
  CliRun r = Uopc("exec " + Q(Tmp("nofile.uir")) + " --out 0=x.npy");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, Tmp("nofile.uir") + ": error: cannot open: No such file or directory\n");
  // a tensor program runs as a plan (issue 11); --print prints what run prints
  r = Uopc("exec " + Q(Example("mul_add.uir")) + " --print");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "[11, 42, 93]\n");
  // a graph that is neither a kernel nor a value
  r = Uopc("exec " + Q(UirFile("addr.uir", "%b = buffer : slot=0 dtype=i32 shape=(2,)\n%r = range 2 : idx=0\n%i = index %b, %r\n")));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("is not a tensor-program op"), std::string::npos) << r.err;
}

// --guard-pages (each buffer against a PROT_NONE page; docs/hardening.md):
// the same values as without, at sizes that end inside a page and exactly at
// one, in place and zeroed outputs; the bounds guard still refuses an
// address out of range, and nothing is written; a tensor program gives
// the value `run` gives.
TEST(CliExec, GuardPagesGiveTheSameValues) {
  std::string prog = Tmp("guard.uir"), a = Tmp("guard_a.npy"), o = Tmp("guard_o.npy"), o2 = Tmp("guard_o2.npy");
  for (int n : {1, 3, 17, 1024, 1025}) {
    // O[i] = O[i] * 2 + A[(3 * i) % n] (a gather through a modulo), in place
    Spit(prog, "%A = buffer : slot=0 dtype=f32 shape=(" + std::to_string(n) + ",)\n%O = buffer : slot=1 dtype=f32 shape=(" +
                   std::to_string(n) + ",)\n%i = range " + std::to_string(n) +
                   " : idx=0\n%j = mul %i, 3\n%m = floormod %j, " + std::to_string(n) +
                   "\n%pa = index %A, %m\n%a = load %pa\n%po = index %O, %i\n%o = load %po\n%t = mul %o, 2.0\n%v = add "
                   "%t, %a\n%st = store %po, %v\n%e = end %st, %i\n%k = sink %e\n");
    std::vector<float> av(n), ov(n), want(n);
    for (int i = 0; i < n; i++) av[i] = (float)i * 0.5f - 7.0f, ov[i] = (float)(i % 11) - 3.0f;
    for (int i = 0; i < n; i++) want[i] = ov[i] * 2.0f + av[(3 * i) % n];
    SaveNpy(a, UOPC_DT_F32, av);
    for (const char *tier : {"fast", "strong"}) {
      SaveNpy(o, UOPC_DT_F32, ov);
      CliRun r = Uopc("exec " + Q(prog) + " --guard-pages --tier=" + tier + " --arg 0=" + Q(a) + " --arg 1=" + Q(o) +
                      " --out 1=" + Q(o));
      ASSERT_EQ(r.status, 0) << n << " " << tier << ": " << r.err;
      EXPECT_EQ(LoadNpy<float>(o, UOPC_DT_F32), want) << n << " " << tier;
      r = Uopc("exec " + Q(prog) + " --guard-pages --tier=" + tier + " --arg 0=" + Q(a) + " --out 1=" + Q(o2));
      ASSERT_EQ(r.status, 0) << r.err;
      std::vector<float> zeroed(n);
      for (int i = 0; i < n; i++) zeroed[i] = av[(3 * i) % n];
      EXPECT_EQ(LoadNpy<float>(o2, UOPC_DT_F32), zeroed) << n << " " << tier;
    }
  }
  // an address out of range: refused by the bounds guard, as without --guard-pages
  Spit(prog, "%A = buffer : slot=0 dtype=i32 shape=(4,)\n%O = buffer : slot=1 dtype=i32 shape=(4,)\n%i = range 4 : "
             "idx=0\n%pi = index %A, %i\n%x = load %pi\n%pa = index %A, %x\n%a = load %pa\n%po = index %O, %i\n%st "
             "= store %po, %a\n%e = end %st, %i\n%k = sink %e\n");
  SaveNpy(a, UOPC_DT_I32, std::vector<int32_t>{0, 1, 9, 2});
  std::remove(o.c_str());
  CliRun r = Uopc("exec " + Q(prog) + " --guard-pages --arg 0=" + Q(a) + " --out 1=" + Q(o));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("out of bounds"), std::string::npos) << r.err;
  EXPECT_FALSE(Exists(o));
  // a tensor program: its plan's arrays guarded too (test_plan_guard.cpp), the same value
  r = Uopc("exec " + Q(Example("mul_add.uir")) + " --guard-pages --print");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, Uopc("run " + Q(Example("mul_add.uir"))).out);
  for (auto &f : {prog, a, o, o2}) std::remove(f.c_str());
}

// A strided load whose bounds guard fails partway (B[s * r + c] running off
// the end of B): LLVM 19's vectorizer once read it as a wide load of an
// interleave group and, with the guard's exit taken for its scalar
// iteration, read past B before the kernel was refused (lib/codegen/emit.c,
// unsafe_address; docs/decisions.md, stop 32).  With --guard-pages such a
// read is a SIGSEGV; the kernel must be refused with the bounds error at
// both tiers, and the same loop one iteration short of the end must run
// and give B's elements.
TEST(CliExec, GuardedStridedLoadIsRefusedWithoutReadingPast) {
  std::string prog = Tmp("gstride.uir"), b = Tmp("gstride_b.npy"), o = Tmp("gstride_o.npy");
  const int n = 256;  // 1 KiB of f32: B ends where a page ends under --guard-pages
  std::vector<float> bv(n);
  for (int i = 0; i < n; i++) bv[i] = (float)i * 0.25f - 3.0f;
  SaveNpy(b, UOPC_DT_F32, bv);
  for (int s : {2, 3, 5, 7}) {
    int c = 65, last = (n - 1 - c) / s;  // r = last is the last iteration in range
    for (int iters : {last + 1, last + 2, last + 5}) {
      Spit(prog, "%B = buffer : slot=0 dtype=f32 shape=(" + std::to_string(n) + ",)\n%O = buffer : slot=1 dtype=f32 "
                 "shape=(" + std::to_string(iters) + ",)\n%r = range " + std::to_string(iters) +
                 " : idx=0\n%m = mul %r, " + std::to_string(s) + "\n%a = add %m, " + std::to_string(c) +
                 "\n%pb = index %B, %a\n%x = load %pb\n%v = add %x, 1.0\n%po = index %O, %r\n%st = store %po, "
                 "%v\n%e = end %st, %r\n%k = sink %e\n");
      for (const char *tier : {"fast", "strong"}) {
        std::remove(o.c_str());
        CliRun r = Uopc("exec " + Q(prog) + " --guard-pages --tier=" + tier + " --arg 0=" + Q(b) + " --out 1=" + Q(o));
        std::string what = "stride " + std::to_string(s) + ", " + std::to_string(iters) + " iterations, " + tier;
        if (iters == last + 1) {
          ASSERT_EQ(r.status, 0) << what << ": " << r.err;
          std::vector<float> want(iters);
          for (int i = 0; i < iters; i++) want[i] = bv[s * i + c] + 1.0f;
          EXPECT_EQ(LoadNpy<float>(o, UOPC_DT_F32), want) << what;
        } else {
          EXPECT_EQ(r.status, 1) << what << ": " << r.err;  // a read past B: a signal (-11), not 1
          EXPECT_NE(r.err.find("out of bounds in BUFFER slot 0"), std::string::npos) << what << ": " << r.err;
          EXPECT_FALSE(Exists(o)) << what;
        }
      }
    }
  }
  for (auto &f : {prog, b, o}) std::remove(f.c_str());
}

// A loop with a bounds guard that fails partway (A[r], r to 25, A of 21) and
// a modulo address (B[(5 * r) % 64]): at the strong tier default<O2> lost the
// loop's vectorize-off hint, vectorized with the guard's exit as the trip
// count and dropped the modulo (B read as <80 x half> strided by 5: past B,
// and B[65] for r = 13), all before the refusal (kernel oracle seed 3351;
// docs/decisions.md, stop 33).  Such a module now runs without either
// vectorizer (jit.h, "no vectorize").  Refused at both tiers under
// --guard-pages; with A long enough, B's modulo lanes exactly.
TEST(CliExec, GuardedLoopWithAModuloAddressIsNotVectorized) {
  std::string prog = Tmp("gmod.uir"), a = Tmp("gmod_a.npy"), b = Tmp("gmod_b.npy"), o = Tmp("gmod_o.npy");
  std::vector<float> bv(64);
  for (int i = 0; i < 64; i++) bv[i] = (float)i;
  for (int na : {21, 26}) {
    std::string text = "%O = buffer : slot=0 dtype=f32 shape=(26,)\n%A = buffer : slot=1 dtype=f32 shape=(" +
                       std::to_string(na) + ",)\n%B = buffer : slot=2 dtype=f32 shape=(64,)\n%r = range 26 : idx=0\n"
                       "%pa = index %A, %r\n%a = load %pa\n%i = mul %r, 5\n%m = floormod %i, 64\n%pb = index %B, %m\n"
                       "%b = load %pb\n%v = max %a, %b\n%po = index %O, %r\n%st = store %po, %v\n%e = end %st, %r\n"
                       "%k = sink %e\n";
    Spit(prog, text);
    std::vector<float> av(na);
    for (int i = 0; i < na; i++) av[i] = (float)(i % 3) - 1.0f;
    SaveNpy(a, UOPC_DT_F32, av);
    SaveNpy(b, UOPC_DT_F32, bv);
    for (const char *tier : {"fast", "strong"}) {
      std::remove(o.c_str());
      CliRun r = UopcEnv("UOPC_CACHE=off", "exec " + Q(prog) + " --guard-pages --tier=" + tier + " --arg 1=" + Q(a) +
                                               " --arg 2=" + Q(b) + " --out 0=" + Q(o));
      std::string what = std::string(tier) + ", A of " + std::to_string(na);
      if (na == 21) {
        EXPECT_EQ(r.status, 1) << what << ": " << r.err;  // a read past B: a signal (-11), not 1
        EXPECT_NE(r.err.find("out of bounds in BUFFER slot 1"), std::string::npos) << what << ": " << r.err;
      } else {
        ASSERT_EQ(r.status, 0) << what << ": " << r.err;
        std::vector<float> want(26);
        for (int i = 0; i < 26; i++) want[i] = bv[(5 * i) % 64] > av[i] ? bv[(5 * i) % 64] : av[i];  // MAX: b if b > a
        EXPECT_EQ(LoadNpy<float>(o, UOPC_DT_F32), want) << what;
      }
    }
  }
  for (auto &f : {prog, a, b, o}) std::remove(f.c_str());
}

TEST(CliCompile, EmitsLlvmAndAsm) {
  std::string k = Q(Example("copy_kernel.uir"));
  CliRun r = Uopc("compile " + k);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("define void @"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("noalias"), std::string::npos);
  EXPECT_EQ(Uopc("compile --emit=llvm " + k).out.find("define void @") != std::string::npos, true);
  for (const char *t : {"fast", "strong"}) {
    r = Uopc(std::string("compile --emit asm --tier=") + t + " " + k);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("ret"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(".globl"), std::string::npos) << r.out;
  }
  EXPECT_EQ(Uopc("compile --emit=obj " + k).status, 2);
  EXPECT_EQ(Uopc("compile").status, 2);
  EXPECT_EQ(Uopc("compile " + k + " " + k).status, 2);
  // a tensor program: every kernel of its plan (issue 11)
  r = Uopc("compile " + Q(Example("mul_add.uir")));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("; kernel 0 of 1: computes", 0), 0u) << r.out;
  r = Uopc("compile " + Q(Example("nested_calls.uir")) + " --emit=asm");
  EXPECT_EQ(r.status, 0) << r.err;
  // a graph that is neither: an error, nothing on stdout
  r = Uopc("compile " + Q(UirFile("bad_root.uir", "%b = buffer : slot=0 dtype=i32 shape=(2,)\n%r = range 2 : idx=0\n%i = index %b, %r\n")));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
}

TEST(CliFuzz, SmallRunsAndTable) {
  CliRun r = Uopc("fuzz --count 2000 --op add --dtype f32 --seed 3");
  EXPECT_EQ(r.status, 0) << r.err;
  std::istringstream in(r.out);
  std::string header, row, total;
  std::getline(in, header);
  std::getline(in, row);
  std::getline(in, total);
  EXPECT_NE(header.find("mismatches"), std::string::npos) << r.out;
  std::istringstream rs(row);
  std::string op, dt;
  unsigned long long cases, refused, mism;
  rs >> op >> dt >> cases >> refused >> mism;
  EXPECT_EQ(op, "add");
  EXPECT_EQ(dt, "f32");
  EXPECT_EQ(cases, 2000u);
  EXPECT_EQ(mism, 0u);
  EXPECT_EQ(total.rfind("total", 0), 0u) << r.out;
  // --dtype IN:OUT picks one cast; --dtype IN all ops on IN; --op all dtypes
  r = Uopc("fuzz --count 100 --dtype f32:i32 --tier both");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("cast      f32:i32"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 pair,"), std::string::npos) << r.out;
  r = Uopc("fuzz --count 100 --op CMPLT");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("4 pairs,"), std::string::npos) << r.out;
  r = Uopc("fuzz --count 100 --dtype f16");
  EXPECT_NE(r.out.find("15 pairs,"), std::string::npos) << r.out;
  for (const char *bad : {"--op floordiv --dtype f32", "--op store", "--dtype f64", "--count 0", "--count x",
                          "--seed -1", "--tier fast2", "extra", "--batch 0"}) {
    r = Uopc(std::string("fuzz ") + bad);
    EXPECT_EQ(r.status, 2) << bad << ": " << r.err;
    EXPECT_EQ(r.out, "");
  }
}

// --self-test: one output a batch corrupted on purpose, every one found as a
// mismatch (and no other), exit 0; the reproducers are not printed.
TEST(CliFuzz, SelfTestFindsEveryCorruptedOutput) {
  CliRun r = Uopc("fuzz --self-test --count 20000 --op mul --batch 1000 --tier both");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("mismatch:"), std::string::npos) << r.err;
  // 4 triples (bool, i32, f32, f16), 20 batches each: one corrupted output a batch
  EXPECT_NE(r.out.find("self-test: 80 outputs corrupted on purpose, 80 mismatches found, 4 of 4 triples exact\n"),
            std::string::npos)
      << r.out;
  std::istringstream in(r.out);
  std::string line;
  std::getline(in, line);  // the header
  for (int i = 0; i < 4 && std::getline(in, line); i++) {
    std::istringstream rs(line);
    std::string op, dt;
    unsigned long long cases, refused, mism;
    rs >> op >> dt >> cases >> refused >> mism;
    EXPECT_EQ(op, "mul") << line;
    EXPECT_EQ(mism, 20u) << line;
  }
}

}  // namespace

// --out writes through what the path names: a symlink keeps being a symlink
// (its target gets the data), a FIFO gets the bytes (a reader on the other
// end), /dev/stdout puts the .npy on standard output; each time the bytes are
// those of a regular-file --out.
TEST(CliExec, OutWritesThroughSymlinksFifosAndDevices) {
  std::string k = Q(Example("copy_kernel.uir")), in = Q(Example("copy_in.npy"));
  std::string plain = TmpPath("out_plain.npy");
  CliRun r = Uopc("exec " + k + " --arg 0=" + in + " --out 1=" + Q(plain));
  ASSERT_EQ(r.status, 0) << r.err;
  std::string want = Slurp(plain);
  ASSERT_GT(want.size(), 10u);
  ASSERT_EQ(want.compare(0, 6, "\x93NUMPY"), 0);

  std::string target = TmpPath("out_target.npy"), link = TmpPath("out_link.npy");
  unlink(target.c_str()), unlink(link.c_str());
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  r = Uopc("exec " + k + " --arg 0=" + in + " --out 1=" + Q(link));
  EXPECT_EQ(r.status, 0) << r.err;
  struct stat st;
  ASSERT_EQ(lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the symlink was replaced by a regular file";
  EXPECT_EQ(Slurp(target), want);

  std::string fifo = TmpPath("out_fifo");
  unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string got = TmpPath("out_fifo_read.npy");
  // the reader runs beside the writer; both finish when the writer closes
  r = Uopc("exec " + k + " --arg 0=" + in + " --out 1=" + Q(fifo) + " & cat " + Q(fifo) + " > " + Q(got) + "; wait $!");
  EXPECT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced by a regular file";
  EXPECT_EQ(Slurp(got), want);

  r = Uopc("exec " + k + " --arg 0=" + in + " --out 1=/dev/stdout");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, want);
  unlink(fifo.c_str()), unlink(link.c_str()), unlink(target.c_str());
}

// A count the fuzzer cannot honour is refused (exit 2, nothing on stdout),
// never a pass with fewer cases: the limit must not overflow on the way.
TEST(CliFuzz, CountsItCannotRunAreRefused) {
  for (const char *n : {"18446744073709551615", "18446744073709551616", "9223372036854775808",
                        "288230376151711744", "1125899906842625", "-5"}) {
    CliRun r = Uopc(std::string("fuzz --count ") + n);
    EXPECT_EQ(r.status, 2) << n << ": " << r.out << r.err;
    EXPECT_EQ(r.out, "") << n;
    EXPECT_NE(r.err.find("--count"), std::string::npos) << n << ": " << r.err;
  }
}
