/* test/fuzz_npy.c - libFuzzer target for the .npy reader and writer.
 *
 * Any bytes: parse them; when they parse, encode the array, parse the
 * encoding and check that dtype, shape and data come back the same (and
 * that the encoding is deterministic); when they do not, check that the
 * error has a code and a message.  Seeds: test/corpus_npy/.  Build with
 * -DUOPC_FUZZ=ON -DCMAKE_C_COMPILER=clang-19, then: fuzz_npy test/corpus_npy
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uopc/uopc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what, const char *msg) {
  fprintf(stderr, "fuzz_npy: %s: %s\n", what, msg ? msg : "");
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uopc_npy a, b;
  uopc_error e;
  if (uopc_npy_parse(data, size, "fuzz.npy", &a, &e) != UOPC_OK) {
    if (!e.code || !e.msg[0]) die("error without a code or message", e.msg);
    if (a.data || a.count) die("failed parse left an array", e.msg);
    return 0;
  }
  size_t n1, n2;
  void *enc = uopc_npy_encode(&a, &n1, &e);
  if (!enc) die("encode failed", e.msg);
  if (uopc_npy_parse(enc, n1, "encoded.npy", &b, &e) != UOPC_OK) die("parse(encode(a)) failed", e.msg);
  size_t bytes = (size_t)a.count * uopc_dtype_size(a.dtype);
  if (a.dtype != b.dtype || a.ndim != b.ndim || a.count != b.count ||
      memcmp(a.shape, b.shape, a.ndim * sizeof a.shape[0]) != 0 || (bytes && memcmp(a.data, b.data, bytes) != 0))
    die("parse(encode(a)) != a", NULL);
  void *enc2 = uopc_npy_encode(&b, &n2, &e);
  if (!enc2 || n1 != n2 || memcmp(enc, enc2, n1) != 0) die("encoding is not deterministic", NULL);
  free(enc);
  free(enc2);
  uopc_npy_free(&a);
  uopc_npy_free(&b);
  return 0;
}
