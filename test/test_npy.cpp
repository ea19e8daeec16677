// NumPy .npy files (include/uopc/npy.h): the bytes NumPy writes, every
// supported dtype and version, strict header parsing with clear messages,
// atomic saves, and no crash on mutated files.
#include <gtest/gtest.h>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli.h"
#include "uopc/uopc.h"

namespace {

// A .npy file with the given header dict text (padded like NumPy: spaces to
// a multiple of 64, then '\n') and raw data bytes.
std::string Npy(const std::string &dict, const std::string &data, int major = 1, bool pad = true) {
  size_t pre = major == 1 ? 10 : 12;
  std::string h = dict;
  if (pad) {
    size_t total = (pre + h.size() + 1 + 63) / 64 * 64;
    h += std::string(total - pre - h.size() - 1, ' ');
  }
  h += "\n";
  std::string out = "\x93NUMPY";
  out += (char)major;
  out += (char)0;
  uint32_t n = (uint32_t)h.size();
  out += (char)(n & 0xff);
  out += (char)((n >> 8) & 0xff);
  if (major != 1) {
    out += (char)((n >> 16) & 0xff);
    out += (char)((n >> 24) & 0xff);
  }
  return out + h + data;
}

std::string Replace(std::string s, const std::string &from, const std::string &to) {
  size_t at = s.find(from);
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

std::string Bytes(const void *p, size_t n) { return std::string(static_cast<const char *>(p), n); }

struct Parsed {
  uopc_status st;
  uopc_error e{};
  uopc_npy a{};
  Parsed(const std::string &bytes) { st = uopc_npy_parse(bytes.data(), bytes.size(), "x.npy", &a, &e); }
  ~Parsed() { uopc_npy_free(&a); }
  std::string msg() const { return e.msg; }
};

TEST(Npy, ParsesWhatNumpyWrites) {
  // np.save of np.arange(3, dtype=np.float32): 128 bytes of header
  float v[3] = {0.0f, 1.0f, 2.0f};
  std::string f = Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", Bytes(v, 12));
  EXPECT_EQ(f.size(), 128u + 12u);
  Parsed p(f);
  ASSERT_EQ(p.st, UOPC_OK) << p.msg();
  EXPECT_EQ(p.a.dtype, UOPC_DT_F32);
  EXPECT_EQ(p.a.ndim, 1u);
  EXPECT_EQ(p.a.shape[0], 3);
  EXPECT_EQ(p.a.count, 3);
  EXPECT_EQ((uintptr_t)p.a.data % 64, 0u);
  EXPECT_EQ(std::memcmp(p.a.data, v, 12), 0);
}

TEST(Npy, EncodeIsWhatNumpyWrites) {
  float v[3] = {0.0f, 1.0f, 2.0f};
  uopc_npy a{};
  a.dtype = UOPC_DT_F32;
  a.ndim = 1;
  a.shape[0] = 3;
  a.count = 3;
  a.data = v;
  size_t n = 0;
  uopc_error e{};
  void *b = uopc_npy_encode(&a, &n, &e);
  ASSERT_NE(b, nullptr) << e.msg;
  EXPECT_EQ(Bytes(b, n), Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", Bytes(v, 12)));
  std::free(b);
  // a scalar and a 2-d array: "()" and "(2, 3)"
  a.ndim = 0;
  a.count = 1;
  b = uopc_npy_encode(&a, &n, &e);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(Bytes(b, n).find("'shape': (), }"), std::string::npos);
  std::free(b);
  a.ndim = 2;
  a.shape[0] = 1;
  a.shape[1] = 3;
  a.count = 3;
  b = uopc_npy_encode(&a, &n, &e);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(Bytes(b, n).find("'shape': (1, 3), }"), std::string::npos);
  EXPECT_EQ((n - 12) % 64, 0u);
  std::free(b);
  a.count = 4;  // does not match the shape
  EXPECT_EQ(uopc_npy_encode(&a, &n, &e), nullptr);
  EXPECT_EQ(e.code, UOPC_ERR_ARG);
  a.count = 3;
  a.dtype = UOPC_DT_VOID;
  EXPECT_EQ(uopc_npy_encode(&a, &n, &e), nullptr);
}

TEST(Npy, EveryDtypeRoundTrips) {
  std::mt19937 rng(7);
  for (uopc_dtype t : {UOPC_DT_BOOL, UOPC_DT_I32, UOPC_DT_F32, UOPC_DT_F16}) {
    size_t es = uopc_dtype_size(t);
    for (int64_t count : {0, 1, 5, 1000}) {
      std::vector<uint8_t> data((size_t)count * es);
      for (auto &x : data) x = t == UOPC_DT_BOOL ? (uint8_t)(rng() & 1) : (uint8_t)rng();
      uopc_npy a{};
      a.dtype = t;
      a.ndim = 1;
      a.shape[0] = count;
      a.count = count;
      a.data = data.data();
      size_t n;
      uopc_error e{};
      void *b = uopc_npy_encode(&a, &n, &e);
      ASSERT_NE(b, nullptr) << e.msg;
      Parsed p(Bytes(b, n));
      std::free(b);
      ASSERT_EQ(p.st, UOPC_OK) << p.msg();
      EXPECT_EQ(p.a.dtype, t);
      EXPECT_EQ(p.a.count, count);
      if (count) EXPECT_EQ(std::memcmp(p.a.data, data.data(), data.size()), 0);
      else EXPECT_EQ(p.a.data, nullptr);
    }
  }
}

TEST(Npy, VersionsAndSpellings) {
  int32_t v[2] = {-1, 7};
  std::string d = Bytes(v, 8);
  for (int major : {1, 2, 3}) {
    Parsed p(Npy("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", d, major));
    EXPECT_EQ(p.st, UOPC_OK) << major << ": " << p.msg();
  }
  // key order, double quotes, no trailing comma, no padding, tabs, (2, ) and
  // a 2-d shape are all fine
  for (const char *dict : {"{'shape': (2,), 'fortran_order': False, 'descr': '<i4'}",
                           "{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (2,)}",
                           "{ 'descr' : '<i4' ,\t'fortran_order':False,'shape':( 2 , ) , }",
                           "{'descr': '<i4', 'fortran_order': False, 'shape': (1, 2), }"}) {
    Parsed p(Npy(dict, d, 1, false));
    EXPECT_EQ(p.st, UOPC_OK) << dict << ": " << p.msg();
    EXPECT_EQ(p.a.count, 2) << dict;
  }
  Parsed b(Npy("{'descr': '|b1', 'fortran_order': False, 'shape': (), }", std::string(1, '\1')));
  ASSERT_EQ(b.st, UOPC_OK) << b.msg();
  EXPECT_EQ(b.a.dtype, UOPC_DT_BOOL);
  EXPECT_EQ(b.a.ndim, 0u);
  EXPECT_EQ(b.a.count, 1);
  Parsed h(Npy("{'descr': '<f2', 'fortran_order': False, 'shape': (1,), }", std::string("\x00\x3c", 2)));
  ASSERT_EQ(h.st, UOPC_OK) << h.msg();
  EXPECT_EQ(*(uint16_t *)h.a.data, 0x3c00);
}

TEST(Npy, ClearErrors) {
  const std::string f4 = std::string(12, '\0');
  struct Case {
    std::string bytes;
    uopc_status code;
    const char *msg;
  };
  std::string good = Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", f4);
  std::string v4 = good;
  v4[6] = 4;
  const Case cases[] = {
      {"", UOPC_ERR_SYNTAX, "truncated file: 0 bytes, no .npy header"},
      {"PK\3\4 a zip file", UOPC_ERR_SYNTAX, "not a .npy file (it does not start with \\x93NUMPY)"},
      {good.substr(0, 9), UOPC_ERR_SYNTAX, "truncated file: 9 bytes, no header length"},
      {v4, UOPC_ERR_ARG, ".npy format version 4.0 is not supported (1.0, 2.0, 3.0)"},
      {good.substr(0, 60), UOPC_ERR_SYNTAX, "truncated header: 50 of 118 bytes"},
      {good.substr(0, good.size() - 1), UOPC_ERR_SYNTAX,
       "truncated data: the header says 3 elements (12 bytes), the file has 11 bytes of data"},
      {good + "xy", UOPC_ERR_SYNTAX, "2 trailing bytes after the data of 3 elements"},
      {Npy("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", f4 + f4), UOPC_ERR_ARG,
       "dtype <f8 is not supported (bool |b1, i32 <i4, f32 <f4, f16 <f2)"},
      {Npy("{'descr': '>f4', 'fortran_order': False, 'shape': (3,), }", f4), UOPC_ERR_ARG,
       "big-endian data (>f4) is not supported: save it little-endian ('<f4')"},
      {Npy("{'descr': '<f4', 'fortran_order': True, 'shape': (3,), }", f4), UOPC_ERR_ARG,
       "Fortran-order arrays are not supported (save with C order)"},
      {Npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,), }", f4), UOPC_ERR_ARG,
       "structured dtypes are not supported (bool |b1, i32 <i4, f32 <f4, f16 <f2)"},
      {Npy("{'descr': '<f4', 'shape': (3,), }", f4), UOPC_ERR_SYNTAX, "malformed header: key 'fortran_order' is missing"},
      {Npy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", f4), UOPC_ERR_SYNTAX,
       "malformed header: key 'descr' appears twice"},
      {Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}", f4), UOPC_ERR_SYNTAX,
       "malformed header: unknown key 'x'"},
      {Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3), }", f4), UOPC_ERR_SYNTAX,
       "malformed header: a ',' (a 1-tuple is written (N,)), found ')' at header offset 52"},
      {Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-3,), }", f4), UOPC_ERR_SYNTAX,
       "malformed header: a non-negative dimension, found '-' at header offset 51"},
      {Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (03,), }", f4), UOPC_ERR_SYNTAX,
       "malformed header: a dimension without leading zeros, found '0' at header offset 51"},
      {Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3.0,), }", f4), UOPC_ERR_SYNTAX,
       "malformed header: a dimension (a decimal integer), found '.' at header offset 52"},
      {Npy("{'descr': '<f4', 'fortran_order': 0, 'shape': (3,), }", f4), UOPC_ERR_SYNTAX,
       "malformed header: True or False for 'fortran_order', found '0' at header offset 34"},
      {Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), } x", f4), UOPC_ERR_SYNTAX,
       "malformed header: only spaces after the dict, found 'x' at header offset 58"},
      {Replace(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", f4), "}    ", "}   \n"), UOPC_ERR_SYNTAX,
       "malformed header: only spaces after the dict, found byte 0x0a at header offset 60"},
      {Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999,99999999999), }", ""), UOPC_ERR_ARG,
       "the shape has too many elements"},
      {Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", ""), UOPC_ERR_SYNTAX,
       "malformed header: dimension too large at header offset 51"},
      {Npy("{'descr': '<f\xc3\xa9', 'fortran_order': False, 'shape': (3,), }", f4, 3), UOPC_ERR_SYNTAX,
       "malformed header: a string of plain ASCII characters, found byte 0xc3 at header offset 13"},
  };
  for (const Case &c : cases) {
    Parsed p(c.bytes);
    EXPECT_EQ(p.st, c.code) << c.msg;
    EXPECT_EQ(p.msg(), c.msg);
    EXPECT_EQ(p.a.data, nullptr);
    EXPECT_STREQ(p.e.file, "x.npy");
  }
  // no bytes at all, and NULL arguments
  uopc_npy a{};
  uopc_error e{};
  EXPECT_EQ(uopc_npy_parse(nullptr, 0, "x.npy", &a, &e), UOPC_ERR_SYNTAX);
  EXPECT_STREQ(e.msg, "truncated file: 0 bytes, no .npy header");
  EXPECT_EQ(uopc_npy_parse(nullptr, 5, "x.npy", &a, &e), UOPC_ERR_ARG);
  EXPECT_EQ(uopc_npy_parse(good.data(), good.size(), "x.npy", nullptr, &e), UOPC_ERR_ARG);
  EXPECT_EQ(uopc_npy_read(nullptr, &a, &e), UOPC_ERR_ARG);
  // no final newline
  std::string nonl = good;
  nonl[127] = ' ';
  Parsed p(nonl);
  EXPECT_EQ(p.msg(), "malformed header: it does not end with a newline");
}

std::string TmpDir() {
  std::string d = TestTempDir() + "/npy";
  EXPECT_TRUE(mkdir(d.c_str(), 0700) == 0 || errno == EEXIST) << d << ": " << std::strerror(errno);
  return d;
}

int CountFiles(const std::string &dir) {
  int n = 0;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d))
      if (e->d_name[0] != '.') n++;
    closedir(d);
  }
  return n;
}

TEST(Npy, SaveIsAtomicAndReadBack) {
  std::string dir = TmpDir(), path = dir + "/a.npy";
  std::remove(path.c_str());
  std::vector<float> v(1000);
  for (int i = 0; i < 1000; i++) v[i] = (float)i - 0.5f;
  uopc_npy a{};
  a.dtype = UOPC_DT_F32;
  a.ndim = 1;
  a.shape[0] = 1000;
  a.count = 1000;
  a.data = v.data();
  uopc_error e{};
  ASSERT_EQ(uopc_npy_save(path.c_str(), &a, &e), UOPC_OK) << e.msg;
  EXPECT_EQ(CountFiles(dir), 1);  // no temporary left
  uopc_npy b{};
  ASSERT_EQ(uopc_npy_read(path.c_str(), &b, &e), UOPC_OK) << e.msg;
  EXPECT_EQ(b.count, 1000);
  EXPECT_EQ(std::memcmp(b.data, v.data(), 4000), 0);
  uopc_npy_free(&b);
  uopc_npy_free(&b);  // twice is fine
  // a failing save leaves the old file alone
  a.count = 3;
  EXPECT_EQ(uopc_npy_save(path.c_str(), &a, &e), UOPC_ERR_ARG);
  EXPECT_EQ(CountFiles(dir), 1);
  ASSERT_EQ(uopc_npy_read(path.c_str(), &b, &e), UOPC_OK) << e.msg;
  EXPECT_EQ(b.count, 1000);
  uopc_npy_free(&b);
  // save_temp: the caller renames
  a.count = 1000;
  char *tmp = nullptr;
  ASSERT_EQ(uopc_npy_save_temp(path.c_str(), &a, &tmp, &e), UOPC_OK) << e.msg;
  EXPECT_EQ(CountFiles(dir), 2);
  EXPECT_EQ(std::string(tmp).rfind(path + ".tmp-", 0), 0u) << tmp;
  std::remove(tmp);
  std::free(tmp);
  std::remove(path.c_str());
  EXPECT_EQ(CountFiles(dir), 0);
}

TEST(Npy, FileErrors) {
  std::string dir = TmpDir();
  uopc_npy a{};
  uopc_error e{};
  std::string missing = dir + "/missing.npy";
  EXPECT_EQ(uopc_npy_read(missing.c_str(), &a, &e), UOPC_ERR_IO);
  EXPECT_STREQ(e.msg, "cannot open: No such file or directory");
  EXPECT_EQ(e.file, missing.c_str());
  EXPECT_EQ(uopc_npy_read(dir.c_str(), &a, &e), UOPC_ERR_IO);
  std::string nodir = dir + "/no/such/dir/x.npy";
  float v = 1.0f;
  uopc_npy b{};
  b.dtype = UOPC_DT_F32;
  b.ndim = 1;
  b.shape[0] = 1;
  b.count = 1;
  b.data = &v;
  EXPECT_EQ(uopc_npy_save(nodir.c_str(), &b, &e), UOPC_ERR_IO);
  EXPECT_NE(std::string(e.msg).find("cannot create"), std::string::npos) << e.msg;
  // the file reader gives the parser's messages, reading in pieces
  std::string f = dir + "/trunc.npy";
  std::string good = Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", std::string(12, '\0'));
  for (size_t cut : {(size_t)0, (size_t)5, (size_t)11, (size_t)100, good.size() - 1, good.size() + 3}) {
    std::ofstream(f, std::ios::binary) << (cut <= good.size() ? good.substr(0, cut) : good + "abc");
    uopc_status st = uopc_npy_read(f.c_str(), &a, &e);
    Parsed p(cut <= good.size() ? good.substr(0, cut) : good + "abc");
    EXPECT_EQ(st, p.st) << cut;
    EXPECT_EQ(std::string(e.msg), p.msg()) << cut;
    uopc_npy_free(&a);
  }
  std::remove(f.c_str());
}

// Random byte flips, insertions and cuts of valid files: every outcome is a
// parse or an error with a message (ASan/UBSan builds check the rest).
TEST(Npy, MutatedFilesNeverCrash) {
  std::mt19937 rng(12345);
  std::vector<std::string> seeds;
  for (const char *dict : {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
                           "{'descr': '|b1', 'fortran_order': False, 'shape': (2, 2), }",
                           "{'descr': '<f2', 'fortran_order': False, 'shape': (), }"})
    for (int major : {1, 2})
      seeds.push_back(Npy(dict, std::string(12, '\x01'), major));
  int ok = 0, bad = 0;
  for (int it = 0; it < 20000; it++) {
    std::string s = seeds[rng() % seeds.size()];
    int muts = 1 + (int)(rng() % 4);
    for (int m = 0; m < muts && !s.empty(); m++) {
      size_t at = rng() % s.size();
      switch (rng() % 4) {
      case 0: s[at] = (char)rng(); break;
      case 1: s.insert(at, 1, "(),'0123456789 \n:{}"[rng() % 19]); break;
      case 2: s.erase(at, 1 + rng() % 3); break;
      default: s.resize(at); break;
      }
    }
    Parsed p(s);
    if (p.st == UOPC_OK) ok++;
    else {
      bad++;
      EXPECT_FALSE(p.msg().empty());
    }
  }
  EXPECT_GT(bad, 0);
  EXPECT_GT(ok + bad, 0);
}

}  // namespace
