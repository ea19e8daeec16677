/* lib/support/env.c - the UOPC_* environment variables: what each accepts,
 * the library's fallback for anything else, and a checker the CLI uses to
 * warn about junk (docs/cli.md, "Environment").
 *
 * The library never refuses to start over an environment variable: a value
 * it cannot read is ignored and the default kept (the table says which).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/support.h"

extern char **environ;

typedef enum kind { K_COUNT, K_MB, K_ONOFF, K_PATH, K_DEBUG, K_CPU, K_FEATURES } kind;

/* The characters of a CPU name and of a feature list, besides letters and digits. */
#define CPU_CHARS "-_."
#define FEATURE_CHARS "-_.+,"

static const struct var {
  const char *name;
  kind k;
  const char *fallback; /* what the library does with a value it cannot read */
} vars[] = {
    {"UOPC_DEBUG", K_DEBUG, "unknown words are ignored"},
    {"UOPC_CACHE", K_ONOFF, "the disk cache stays on"},
    {"UOPC_CACHE_DIR", K_PATH, "an empty value means the default directory"},
    {"UOPC_CACHE_MAX_MB", K_MB, "the default bound is kept"},
    {"UOPC_REWRITE_STEPS_PER_NODE", K_COUNT, "the default (100) is kept"},
    {"UOPC_REWRITE_MIN_STEPS", K_COUNT, "the default (10000000) is kept"},
    {"UOPC_REWRITE_CHAIN", K_COUNT, "the default (100000) is kept"},
    {"UOPC_THREADS", K_COUNT, "the CPUs the process may run on are used"},
    {"UOPC_SPLIT_MIN_WORK", K_COUNT, "the default (262144) is kept"},
    {"UOPC_POOL_SPIN_US", K_COUNT, "the default (200) is kept"},
    {"UOPC_STREAM", K_ONOFF, "streaming stores as the compile flags say (0/off: never)"},
    {"UOPC_STREAM_MIN_BYTES", K_COUNT, "the default (half the last level cache) is kept"},
    {"UOPC_TILE_MIN_WORK", K_COUNT, "the default thresholds (2^28 and 2^23 multiply-adds) are kept"},
    {"UOPC_PACK_MIN_BYTES", K_COUNT, "the default (a stride of 4 KiB, read by 8 row blocks or more) is kept"},
    {"UOPC_JIT_CPU", K_CPU, "the host CPU is used (empty: the host CPU)"},
    {"UOPC_JIT_FEATURES", K_FEATURES, "the CPU's own features are used (the host's without UOPC_JIT_CPU)"},
    {"UOPC_JIT_DUALMAP", K_ONOFF, "code memory stays double-mapped where the system allows it"},
    {"UOPC_LONG_TESTS", K_PATH, ""}, /* the test suite's switch: any value */
};

static const char *const debug_words[] = {"rewrite", "check", "cache", "linearize", "schedule"};

int uopi_env_count(const char *name, uint64_t *out) {
  const char *v = getenv(name);
  if (!v || *v < '1' || *v > '9') return 0;
  uint64_t x = 0;
  for (; *v >= '0' && *v <= '9'; v++) {
    if (x > (UINT64_MAX - 9) / 10) return 0;
    x = x * 10 + (uint64_t)(*v - '0');
  }
  if (*v) return 0;
  *out = x;
  return 1;
}

/* A switch's value: 0 off, 1 on, -1 neither. */
static int onoff(const char *v) {
  static const char *const words[] = {"0", "1", "off", "on", "no", "yes", "false", "true"};
  for (size_t i = 0; v && i < sizeof words / sizeof words[0]; i++)
    if (strcmp(v, words[i]) == 0) return (int)(i & 1);
  return -1;
}

int uopi_env_onoff(const char *name) { return onoff(getenv(name)); }

const char *uopi_env_token(const char *name, const char *extra) {
  const char *v = getenv(name);
  if (!v || !*v || strlen(v) > 200) return NULL;
  for (const char *p = v; *p; p++)
    if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') && !(*p >= '0' && *p <= '9') && !strchr(extra, *p))
      return NULL;
  return v;
}

/* A feature list: comma-separated +name or -name. */
static int is_features(const char *v) {
  for (;;) {
    if (*v != '+' && *v != '-') return 0;
    size_t n = strcspn(++v, ",");
    if (n == 0) return 0;
    for (size_t i = 0; i < n; i++)
      if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789" CPU_CHARS, v[i])) return 0;
    v += n;
    if (!*v) return 1;
    v++;
  }
}

static int is_count(const char *v) {
  if (*v < '1' || *v > '9') return 0;
  size_t n = strspn(v, "0123456789");
  return v[n] == 0 && n <= 19;
}

static int is_mb(const char *v) {
  char *end;
  double d = strtod(v, &end);
  return end != v && *end == 0 && d >= 0 && d < 1e9;
}

/* The first word of a comma/space separated UOPC_DEBUG that is not known. */
static const char *bad_debug_word(const char *v, char *word, size_t n) {
  while (*v) {
    size_t len = strcspn(v, ", ");
    if (len) {
      int known = 0;
      for (size_t i = 0; i < sizeof debug_words / sizeof debug_words[0]; i++)
        known |= strlen(debug_words[i]) == len && memcmp(debug_words[i], v, len) == 0;
      if (!known) {
        snprintf(word, n, "%.*s", (int)(len < 40 ? len : 40), v);
        return word;
      }
    }
    v += len;
    v += strspn(v, ", ");
  }
  return NULL;
}

unsigned uopc_env_check(void (*warn)(void *ud, const char *msg), void *ud) {
  unsigned bad = 0;
  char msg[320], word[48];
  for (char **e = environ; e && *e; e++) {
    if (strncmp(*e, "UOPC_", 5) != 0) continue;
    const char *eq = strchr(*e, '=');
    if (!eq) continue;
    size_t nlen = (size_t)(eq - *e);
    const char *v = eq + 1;
    const struct var *x = NULL;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
      if (strlen(vars[i].name) == nlen && memcmp(vars[i].name, *e, nlen) == 0) x = &vars[i];
    msg[0] = 0;
    if (!x) {
      snprintf(msg, sizeof msg, "%.*s is not a variable uopc reads (ignored)", (int)(nlen < 60 ? nlen : 60), *e);
    } else {
      const char *want = NULL;
      switch (x->k) {
      case K_COUNT: want = is_count(v) ? NULL : "a positive integer"; break;
      case K_MB: want = is_mb(v) ? NULL : "a number of megabytes (0 or more)"; break;
      case K_ONOFF: want = onoff(v) >= 0 ? NULL : "0 or 1 (or off/on, no/yes, false/true)"; break;
      case K_PATH: break;
      case K_CPU:
        want = !*v || uopi_env_token(x->name, CPU_CHARS) ? NULL : "a CPU name (letters, digits, - _ .)";
        break;
      case K_FEATURES:
        want = !*v || (is_features(v) && uopi_env_token(x->name, FEATURE_CHARS)) ? NULL : "a feature list (+name or -name, comma-separated)";
        break;
      case K_DEBUG:
        if (bad_debug_word(v, word, sizeof word)) {
          snprintf(msg, sizeof msg, "UOPC_DEBUG: unknown switch '%s' (known: rewrite, check, cache, linearize, schedule; %s)",
                   word, x->fallback);
        }
        break;
      }
      if (want)
        snprintf(msg, sizeof msg, "%s='%.40s' is not %s; %s", x->name, v, want, x->fallback);
    }
    if (msg[0]) {
      bad++;
      if (warn) warn(ud, msg);
    }
  }
  return bad;
}
