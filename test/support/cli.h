// Running the built command-line tool from tests, temporary files and .npy
// files: the helpers every CLI test shares.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

extern "C" {
#include "uopc/uopc.h"
}

struct CliRun {
  int status;       // exit status (-1: killed by a signal)
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `uopc ARGS` (ARGS as shell text) with stdin from /dev/null, or from
// the file `in` when given.
CliRun Uopc(const std::string &args, const std::string &in = "");
// The same with environment assignments before the command ("A=1 B=2").
CliRun UopcEnv(const std::string &env, const std::string &args);
// This test process's directory for temporary files (TEST_TMPDIR or /tmp,
// then uopc_tPID_XXXXXX): made on first use, removed with everything in it
// when the process exits, so that a test run leaves nothing behind.
std::string TestTempDir();
// A path for a temporary file of this test process, in TestTempDir() (not
// created).
std::string TmpPath(const std::string &name);
// Single-quoted for the shell.
std::string Q(const std::string &s);
std::string Slurp(const std::string &path);
void Spit(const std::string &path, const std::string &text);
// The path of a bundled example (examples/NAME).
std::string ExamplePath(const char *name);
// The golden tensor programs test/golden/plan_*.uir, sorted.
std::vector<std::string> GoldenPlans();
// Writes text to a temporary .uir file and returns its path.
std::string UirFile(const std::string &name, const std::string &text);

// .npy files of a flat vector (shape: the vector's length unless given).
bool SaveNpyRaw(const std::string &path, uopc_dtype t, const void *data, std::vector<int64_t> shape, std::string *err);
template <class T>
bool SaveNpy(const std::string &path, uopc_dtype t, const std::vector<T> &v, std::vector<int64_t> shape = {},
             std::string *err = nullptr) {
  if (shape.empty()) shape = {(int64_t)v.size()};
  return SaveNpyRaw(path, t, v.data(), shape, err);
}
// The data of a .npy file of dtype t as raw bytes (empty and *err set on error).
std::vector<uint8_t> LoadNpyRaw(const std::string &path, uopc_dtype t, std::string *err);
template <class T>
std::vector<T> LoadNpy(const std::string &path, uopc_dtype t, std::string *err = nullptr) {
  std::vector<uint8_t> b = LoadNpyRaw(path, t, err);
  std::vector<T> v(b.size() / sizeof(T));
  for (size_t i = 0; i < v.size(); i++) memcpy(&v[i], b.data() + i * sizeof(T), sizeof(T));
  return v;
}
