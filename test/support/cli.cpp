#include "support/cli.h"

#include <dirent.h>
#include <ftw.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

std::string Slurp(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void Spit(const std::string &path, const std::string &text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

// The directory of TestTempDir: made on first use, removed with what is in it
// when the process that made it exits (a forked child leaves it alone).
namespace {
struct ProcessTempDir {
  std::string path;
  pid_t owner = 0;
  ProcessTempDir() {
    std::string t = testing::TempDir() + "uopc_t" + std::to_string(getpid()) + "_XXXXXX";
    std::vector<char> buf(t.begin(), t.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) {
      ADD_FAILURE() << "mkdtemp " << t << ": " << std::strerror(errno);
      path = testing::TempDir() + "uopc_t" + std::to_string(getpid());
      return;
    }
    path = buf.data();
    owner = getpid();
  }
  ~ProcessTempDir() {
    if (owner != getpid()) return;
    nftw(path.c_str(), [](const char *p, const struct stat *, int, struct FTW *) { return std::remove(p); }, 16,
         FTW_DEPTH | FTW_PHYS);
  }
};
}  // namespace

std::string TestTempDir() {
  static ProcessTempDir d;
  return d.path;
}

std::string TmpPath(const std::string &name) { return TestTempDir() + "/" + name; }

std::string Q(const std::string &s) {
  std::string r = "'";
  for (char ch : s) r += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return r + "'";
}

std::string ExamplePath(const char *name) { return std::string(UOPC_SOURCE_DIR) + "/examples/" + name; }

std::vector<std::string> GoldenPlans() {
  std::string dir = std::string(UOPC_SOURCE_DIR) + "/test/golden";
  std::vector<std::string> v;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *de = readdir(d)) {
      std::string n = de->d_name;
      if (n.rfind("plan_", 0) == 0 && n.size() > 4 && n.compare(n.size() - 4, 4, ".uir") == 0) v.push_back(dir + "/" + n);
    }
    closedir(d);
  }
  std::sort(v.begin(), v.end());
  return v;
}

std::string UirFile(const std::string &name, const std::string &text) {
  std::string p = TmpPath(name);
  Spit(p, text);
  return p;
}

static CliRun run_cli(const std::string &env, const std::string &args, const std::string &in) {
  static std::atomic<int> n{0};
  std::string tag = std::to_string(n++);
  std::string out = TmpPath("stdout" + tag), err = TmpPath("stderr" + tag);
  std::string cmd = env + (env.empty() ? "" : " ") + Q(UOPC_CLI) + " " + args + " <" + (in.empty() ? std::string("/dev/null") : Q(in)) + " >" +
                    Q(out) + " 2>" + Q(err);
  int st = std::system(cmd.c_str());
  CliRun r{WIFEXITED(st) ? WEXITSTATUS(st) : -1, Slurp(out), Slurp(err)};
  std::remove(out.c_str());
  std::remove(err.c_str());
  return r;
}

bool SaveNpyRaw(const std::string &path, uopc_dtype t, const void *data, std::vector<int64_t> shape, std::string *err) {
  uopc_npy a{};
  a.dtype = t;
  a.ndim = (uint32_t)shape.size();
  a.count = 1;
  for (size_t i = 0; i < shape.size(); i++) a.shape[i] = shape[i], a.count *= shape[i];
  a.data = const_cast<void *>(data);
  uopc_error e{};
  if (uopc_npy_save(path.c_str(), &a, &e) == UOPC_OK) return true;
  if (err) *err = e.msg;
  else ADD_FAILURE() << path << ": " << e.msg;
  return false;
}

std::vector<uint8_t> LoadNpyRaw(const std::string &path, uopc_dtype t, std::string *err) {
  uopc_npy a{};
  uopc_error e{};
  std::vector<uint8_t> v;
  if (uopc_npy_read(path.c_str(), &a, &e) != UOPC_OK) {
    if (err) *err = path + ": " + e.msg;
    else ADD_FAILURE() << path << ": " << e.msg;
    return v;
  }
  if (a.dtype != t) {
    if (err) *err = path + ": wrong dtype";
    else ADD_FAILURE() << path << ": wrong dtype";
  } else {
    size_t n = (size_t)a.count * uopc_dtype_size(t);
    v.assign((const uint8_t *)a.data, (const uint8_t *)a.data + n);
  }
  uopc_npy_free(&a);
  return v;
}

CliRun Uopc(const std::string &args, const std::string &in) { return run_cli("", args, in); }
CliRun UopcEnv(const std::string &env, const std::string &args) { return run_cli(env, args, ""); }
