// The command-line tool, run as a program: output, error format, exit codes.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "uopc/uopc.h"
#include "support/cli.h"

namespace {


TEST(Cli, PrintRoundTripsTheExamples) {
  for (const char *f : {"copy_kernel.uir", "mul_add.uir", "where.uir", "movement_reduce.uir", "sq_call.uir",
                        "nested_calls.uir"}) {
    SCOPED_TRACE(f);
    CliRun a = Uopc("print '" + ExamplePath(f) + "'");
    EXPECT_EQ(a.status, 0);
    EXPECT_EQ(a.err, "");
    ASSERT_NE(a.out, "");
    std::string p = TmpPath("printed.uir");
    Spit(p, a.out);
    CliRun b = Uopc("print '" + p + "'");
    EXPECT_EQ(b.status, 0);
    EXPECT_EQ(b.out, a.out);  // canonical: printing the print changes nothing
    std::remove(p.c_str());
  }
}

TEST(Cli, PrintReadsStandardInput) {
  CliRun a = Uopc("print -", ExamplePath("sq_call.uir"));
  EXPECT_EQ(a.status, 0);
  EXPECT_EQ(a.out, "%0 = param : slot=0 dtype=i32\n%1 = mul %0, %0\n%2 = call %1, 7 : name=sq\n");
  std::string p = TmpPath("bad_stdin.uir");
  Spit(p, "%a = add 1, %b\n");
  CliRun b = Uopc("print -", p);
  EXPECT_EQ(b.status, 1);
  EXPECT_EQ(b.err, "<stdin>:1:13: error: undefined name %b\n");
  std::remove(p.c_str());
}

// A write that fails is an error (exit 1 and a message), for the graph
// printers that write as they go (print, simplify: small graphs, whose text
// only reaches the device at exit, and one of several 64 KiB pieces) and
// for the held-back output (print --emit=dot, run).
TEST(Cli, AFailedWriteIsAnError) {
  std::string big = "%v0 = param : slot=0 dtype=f32\n";
  for (int k = 1; k <= 20000; k++) big += "%v" + std::to_string(k) + " = mul %v" + std::to_string(k - 1) + ", 0.5\n";
  std::string bigf = UirFile("big_print.uir", big);
  std::string ex = ExamplePath("copy_kernel.uir");
  std::string errf = TmpPath("full_err.txt");
  for (std::string args : {"print " + Q(ex), "simplify " + Q(ex), "print " + Q(bigf), "simplify " + Q(bigf),
                           "print --emit=dot " + Q(ex), "run " + Q(ExamplePath("mul_add.uir"))}) {
    SCOPED_TRACE(args);
    int st = std::system((Q(UOPC_CLI) + " " + args + " </dev/null >/dev/full 2>" + Q(errf)).c_str());
    ASSERT_TRUE(WIFEXITED(st));
    EXPECT_EQ(WEXITSTATUS(st), 1);
    EXPECT_NE(Slurp(errf).find("No space left on device"), std::string::npos) << Slurp(errf);
    // and to a working stdout, the whole text
    CliRun r = Uopc(args);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_FALSE(r.out.empty());
  }
  EXPECT_EQ(Uopc("print " + Q(bigf)).out.size(), Uopc("simplify " + Q(bigf)).out.size());
  std::remove(errf.c_str());
  std::remove(bigf.c_str());
}

TEST(Cli, ErrorsAreFileLineColAndNothingOnStdout) {
  std::string p = TmpPath("bad.uir");
  Spit(p, "%a = add 1, 2\n%b = mul %a, %c\n");
  CliRun r = Uopc("print '" + p + "'");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, p + ":2:14: error: undefined name %c\n");

  Spit(p, "%x = param : slot=0 dtype=i32 shape=(2,)\n%y = param : slot=1 dtype=i32 shape=(3,)\n%z = add %x, %y\n");
  r = Uopc("print '" + p + "'");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, p + ":3:6: error: ADD shape mismatch (2,) vs (3,)\n");

  Spit(p, "# nothing here\n");
  r = Uopc("print '" + p + "'");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, p + ": error: empty program (no line defines a node)\n");
  std::remove(p.c_str());

  r = Uopc("print /nonexistent/dir/x.uir");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "/nonexistent/dir/x.uir: error: cannot open: No such file or directory\n");
}

TEST(Cli, UsageErrorsExitTwo) {
  for (const char *args : {"", "frobnicate", "print", "print a.uir b.uir", "--bogus print x.uir"}) {
    SCOPED_TRACE(args);
    CliRun r = Uopc(args);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("uopc"), std::string::npos);
  }
  CliRun h = Uopc("--help");
  EXPECT_EQ(h.status, 0);
  EXPECT_NE(h.out.find("usage: uopc"), std::string::npos);
  EXPECT_NE(h.out.find("print FILE.uir"), std::string::npos);
  EXPECT_EQ(h.err, "");
}

TEST(Cli, TraceFlagIsAccepted) {
  CliRun r = Uopc("--trace print '" + ExamplePath("mul_add.uir") + "'");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "%0 = stack 1, 2, 3\n%1 = stack 10, 20, 30\n%2 = mul %0, %1\n%3 = add %2, %0\n");
}

// `uopc --version`: exactly one line, `uopc VERSION (LLVM X.Y.Z)`; the same
// after a verb.  VERB --help prints the verb's usage.
TEST(Cli, VersionIsOneLine) {
  const std::string want = std::string("uopc ") + uopc_version() + " (LLVM " + uopc_llvm_version() + ")\n";
  EXPECT_EQ(want.rfind("uopc 0.3.0 (LLVM 19.", 0), 0u) << want;
  for (const char *args : {"--version", "--trace --version", "print --version", "exec --version", "fuzz --version"}) {
    SCOPED_TRACE(args);
    CliRun r = Uopc(args);
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out, want);
    EXPECT_EQ(r.err, "");
  }
  for (const char *args : {"print -h", "exec --help", "cache --help", "fuzz -h"}) {
    SCOPED_TRACE(args);
    CliRun r = Uopc(args);
    EXPECT_EQ(r.status, 0);
    std::string verb = std::string(args).substr(0, std::string(args).find(' '));
    EXPECT_EQ(r.out.rfind("usage: uopc [--trace] " + verb + " ", 0), 0u) << r.out;
    EXPECT_EQ(r.err, "");
  }
}

// `--` ends options: every later argument is positional, even one that
// starts with '-', and errors name it as written.
TEST(Cli, DoubleDashEndsOptions) {
  std::string dir = TmpPath("dashdir");
  ASSERT_EQ(std::system(("mkdir -p '" + dir + "'").c_str()), 0);
  Spit(dir + "/-m.uir", Slurp(ExamplePath("mul_add.uir")));
  Spit(dir + "/--trace", Slurp(ExamplePath("mul_add.uir")));
  Spit(dir + "/-bad.uir", "%a = add 1, %b\n");
  const std::string cd = "cd '" + dir + "' && '" + UOPC_CLI + "' ";
  auto run_in_dir = [&](const std::string &args) {
    std::string out = TmpPath("dd_out"), err = TmpPath("dd_err");
    int st = std::system((cd + args + " </dev/null >'" + out + "' 2>'" + err + "'").c_str());
    CliRun r{WIFEXITED(st) ? WEXITSTATUS(st) : -1, Slurp(out), Slurp(err)};
    std::remove(out.c_str());
    std::remove(err.c_str());
    return r;
  };
  const std::string printed = "%0 = stack 1, 2, 3\n%1 = stack 10, 20, 30\n%2 = mul %0, %1\n%3 = add %2, %0\n";
  for (const char *args : {"print -- -m.uir", "-- print -m.uir", "--trace print -- -m.uir", "print -- --trace"}) {
    SCOPED_TRACE(args);
    CliRun r = run_in_dir(args);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, printed);
  }
  CliRun t = run_in_dir("run -- --trace");  // a file named --trace, and no trace
  EXPECT_EQ(t.status, 0) << t.err;
  EXPECT_EQ(t.out, "[11, 42, 93]\n");
  EXPECT_EQ(t.err, "");
  CliRun bad = run_in_dir("print -- -bad.uir");
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(bad.err, "-bad.uir:1:13: error: undefined name %b\n");
  CliRun none = run_in_dir("print -- -none.uir");
  EXPECT_EQ(none.status, 1);
  EXPECT_EQ(none.err, "-none.uir: error: cannot open: No such file or directory\n");
  CliRun help = run_in_dir("print -- --help");  // a file, not the help
  EXPECT_EQ(help.status, 1);
  EXPECT_EQ(help.out, "");
  EXPECT_EQ(help.err, "--help: error: cannot open: No such file or directory\n");
  // without `--`, a leading '-' is an option, as before
  CliRun opt = run_in_dir("print -m.uir");
  EXPECT_EQ(opt.status, 2);
  EXPECT_NE(opt.err.find("unknown option '-m.uir'"), std::string::npos) << opt.err;
  // after `--` options are positional: one FILE too many
  CliRun two = run_in_dir("exec -- -m.uir --print");
  EXPECT_EQ(two.status, 2);
  // `-` after `--` is still standard input
  CliRun in = Uopc("print -- -", ExamplePath("mul_add.uir"));
  EXPECT_EQ(in.status, 0) << in.err;
  EXPECT_EQ(in.out, printed);
  // a verb after `--`: `--version` is then a verb name
  CliRun v = Uopc("-- --version");
  EXPECT_EQ(v.status, 2);
  EXPECT_NE(v.err.find("unknown verb '--version'"), std::string::npos) << v.err;
  ASSERT_EQ(std::system(("rm -rf '" + dir + "'").c_str()), 0);
}

}  // namespace
