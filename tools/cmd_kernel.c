/* tools/cmd_kernel.c - verbs on kernels: compile, exec, fuzz.
 *
 *   uopc compile [--emit=llvm|asm] [--tier=fast|strong] FILE.uir
 *   uopc exec FILE.uir [--arg S=IN.npy]... [--out S=OUT.npy]... [--tier=fast|strong] [--print]
 *   uopc fuzz [--seed S] [--count N] [--op OP] [--dtype D|IN:OUT] [--tier=fast|strong|both] [--batch N]
 *
 * docs/cli.md documents them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "fuzz.h"

/* ---- options ------------------------------------------------------------------ */

/* If argv[*i] is the option `name` as `name=VALUE` or `name VALUE`, stores
   VALUE (advancing *i past a separate value) and returns 1; 0 when it is not
   this option; -1 (after a usage message) when the value is missing. */
static int opt(const char *verb, int argc, char **argv, int *i, const char *name, const char **val) {
  const char *a = argv[*i];
  size_t n = strlen(name);
  if (strncmp(a, name, n) != 0) return 0;
  if (a[n] == '=') {
    *val = a + n + 1;
    return 1;
  }
  if (a[n] != 0) return 0;
  if (*i + 1 >= argc) {
    verb_usage(verb, "%s needs a value", name);
    return -1;
  }
  *val = argv[++*i];
  return 1;
}

static int parse_tier(const char *verb, const char *s, uopc_tier *t, int *both) {
  if (strcmp(s, "fast") == 0) *t = UOPC_TIER_FAST;
  else if (strcmp(s, "strong") == 0) *t = UOPC_TIER_STRONG;
  else if (both && strcmp(s, "both") == 0) *both = 1;
  else return verb_usage(verb, "--tier must be fast or strong%s, not '%s'", both ? " or both" : "", s);
  return EXIT_OK;
}

/* A decimal (or 0x hex) unsigned integer, the whole string. */
static int parse_u64(const char *s, uint64_t *v) {
  if (!*s || *s == '-' || *s == '+' || *s == ' ') return 0;
  char *end;
  errno = 0;
  unsigned long long x = strtoull(s, &end, 0);
  if (errno || *end) return 0;
  *v = x;
  return 1;
}

static const char *tier_name(uopc_tier t) { return t == UOPC_TIER_STRONG ? "strong" : "fast"; }

/* ---- compile -------------------------------------------------------------------- */

/* uopc compile: the kernel's LLVM IR (as emitted, before optimization) or the
   host assembly of its optimized code. */
int cmd_compile(cli *k, int argc, char **argv) {
  const char *file = NULL, *v;
  int asm_out = 0;
  uopc_compile_opts o = {.tier = UOPC_TIER_FAST};
  for (int i = 0; i < argc; i++) {
    int r;
    if ((r = opt("compile", argc, argv, &i, "--emit", &v))) {
      if (r < 0) return EXIT_USAGE;
      if (strcmp(v, "llvm") == 0) asm_out = 0;
      else if (strcmp(v, "asm") == 0) asm_out = 1;
      else return verb_usage("compile", "--emit must be llvm or asm, not '%s'", v);
    } else if ((r = opt("compile", argc, argv, &i, "--tier", &v))) {
      if (r < 0 || parse_tier("compile", v, &o.tier, NULL)) return EXIT_USAGE;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return verb_usage("compile", "unknown option '%s'", argv[i]);
    } else if (file) {
      return verb_usage("compile", "takes one FILE.uir");
    } else {
      file = argv[i];
    }
  }
  if (!file) return verb_usage("compile", "needs a FILE.uir");
  uopc_node *root = load(k, file);
  if (!root) return EXIT_ERR;
  uopc_error e;
  char *s = asm_out ? uopc_emit_asm(k->c, root, &o, &e) : uopc_emit_llvm(k->c, root, &o, &e);
  if (!s) return e.file = NULL, report(&e, file);
  out_str(k, s);
  free(s);
  return EXIT_OK;
}

/* ---- exec ------------------------------------------------------------------------- */

#define MAX_SLOTS 64

typedef struct slot_io {
  const char *in, *out; /* paths, or NULL */
} slot_io;

/* "S=PATH" into slots[S].in or .out. */
static int slot_arg(const char *flag, const char *s, slot_io *slots, int is_out) {
  const char *eq = strchr(s, '=');
  uint64_t v;
  char num[24];
  size_t n = eq ? (size_t)(eq - s) : 0;
  if (!eq || n == 0 || n >= sizeof num || !eq[1])
    return verb_usage("exec", "%s takes SLOT=FILE.npy, not '%s'", flag, s);
  memcpy(num, s, n);
  num[n] = 0;
  if (!parse_u64(num, &v) || num[0] < '0' || num[0] > '9' || (n > 1 && num[1] == 'x'))
    return verb_usage("exec", "%s takes SLOT=FILE.npy with a decimal SLOT, not '%s'", flag, s);
  if (v >= MAX_SLOTS) return verb_usage("exec", "%s: no kernel has a BUFFER slot %s", flag, num);
  const char **p = is_out ? &slots[v].out : &slots[v].in;
  if (*p) return verb_usage("exec", "%s %s= is given twice", flag, num);
  *p = eq + 1;
  return EXIT_OK;
}

/* "(32,)" for an npy shape. */
static void shape_str(const uopc_npy *a, char *buf, size_t n) {
  size_t len = (size_t)snprintf(buf, n, "(");
  for (uint32_t i = 0; i < a->ndim && len < n; i++)
    len += (size_t)snprintf(buf + len, n - len, "%s%lld", i ? ", " : "", (long long)a->shape[i]);
  if (len < n) snprintf(buf + len, n - len, "%s)", a->ndim == 1 ? "," : "");
}

static int file_error(const char *file, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int file_error(const char *file, const char *fmt, ...) {
  uopc_error e = {.code = UOPC_ERR_ARG};
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e.msg, sizeof e.msg, fmt, ap);
  va_end(ap);
  return report(&e, file);
}

static void *zeroed(size_t bytes) {
  size_t r = (bytes + 63) / 64 * 64;
  void *p = aligned_alloc(64, r ? r : 64);
  if (p) memset(p, 0, r ? r : 64);
  return p;
}

/* slot s's values as a Python list on stdout: "slot S: [...]" */
static void print_buffer(cli *k, uint32_t s, uopc_dtype t, const void *p, int64_t len) {
  out_fmt(k, "slot %u: [", s);
  for (int64_t i = 0; i < len; i++) {
    double v;
    switch (t) {
    case UOPC_DT_BOOL: v = ((const uint8_t *)p)[i] != 0; break;
    case UOPC_DT_I32: v = ((const int32_t *)p)[i]; break;
    case UOPC_DT_F16: v = uopc_f16_to_double(((const uint16_t *)p)[i]); break;
    default: v = ((const float *)p)[i]; break;
    }
    char num[40];
    uopc_fmt_scalar(v, t, num);
    out_fmt(k, "%s%s", i ? ", " : "", num);
  }
  out_str(k, "]\n");
}

/* uopc exec: runs the kernel on buffers read from and written to .npy files. */
int cmd_exec(cli *k, int argc, char **argv) {
  const char *file = NULL, *v;
  int print = 0;
  slot_io slots[MAX_SLOTS] = {{0}};
  uopc_compile_opts o = {.tier = UOPC_TIER_FAST};
  for (int i = 0; i < argc; i++) {
    int r;
    if ((r = opt("exec", argc, argv, &i, "--arg", &v))) {
      if (r < 0 || slot_arg("--arg", v, slots, 0)) return EXIT_USAGE;
    } else if ((r = opt("exec", argc, argv, &i, "--out", &v))) {
      if (r < 0 || slot_arg("--out", v, slots, 1)) return EXIT_USAGE;
    } else if ((r = opt("exec", argc, argv, &i, "--tier", &v))) {
      if (r < 0 || parse_tier("exec", v, &o.tier, NULL)) return EXIT_USAGE;
    } else if (strcmp(argv[i], "--print") == 0) {
      print = 1;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return verb_usage("exec", "unknown option '%s'", argv[i]);
    } else if (file) {
      return verb_usage("exec", "takes one FILE.uir");
    } else {
      file = argv[i];
    }
  }
  if (!file) return verb_usage("exec", "needs a FILE.uir");
  for (int s = 0; s < MAX_SLOTS; s++)
    for (int t = s + 1; t < MAX_SLOTS; t++)
      if (slots[s].out && slots[t].out && strcmp(slots[s].out, slots[t].out) == 0)
        return verb_usage("exec", "--out %d and --out %d write the same file '%s'", s, t, slots[s].out);

  uopc_node *root = load(k, file);
  if (!root) return EXIT_ERR;
  uopc_error e;
  uopc_kernel *kern = uopc_compile(k->c, root, &o, &e);
  if (!kern) return e.file = NULL, report(&e, file);

  uint32_t nb = uopc_kernel_nbufs(kern);
  void *bufs[MAX_SLOTS] = {0};
  uopc_npy arrays[MAX_SLOTS];
  char *tmps[MAX_SLOTS] = {0};
  memset(arrays, 0, sizeof arrays);
  int rc = EXIT_OK;
  for (int s = 0; s < MAX_SLOTS && !rc; s++)
    if ((slots[s].in || slots[s].out) && (uint32_t)s >= nb) {
      if (nb) rc = file_error(file, "%s %d=: the kernel has no BUFFER slot %d (its slots are 0..%u)",
                              slots[s].in ? "--arg" : "--out", s, s, nb - 1);
      else rc = file_error(file, "%s %d=: the kernel has no BUFFERs", slots[s].in ? "--arg" : "--out", s);
    }
  for (uint32_t s = 0; s < nb && !rc; s++) {
    uopc_dtype t = uopc_kernel_buf_dtype(kern, s);
    int64_t len = uopc_kernel_buf_len(kern, s);
    size_t bytes = (size_t)len * uopc_dtype_size(t);
    if (!slots[s].in && !slots[s].out) {
      rc = file_error(file, "BUFFER slot %u (%s, shape (%lld,)) is given by neither --arg %u=IN.npy nor --out %u=OUT.npy", s,
                      uopc_dtype_name(t), (long long)len, s, s);
    } else if (slots[s].in) {
      uopc_npy *a = &arrays[s];
      if (uopc_npy_read(slots[s].in, a, &e)) {
        rc = report(&e, slots[s].in);
        break;
      }
      char want[32], got[64 * 22 + 8];
      shape_str(a, got, sizeof got);
      snprintf(want, sizeof want, "(%lld,)", (long long)len);
      if (a->dtype != t)
        rc = file_error(slots[s].in, "dtype %s (%s) does not match BUFFER slot %u dtype %s (%s)", uopc_npy_descr(a->dtype),
                        uopc_dtype_name(a->dtype), s, uopc_dtype_name(t), uopc_npy_descr(t));
      else if (a->ndim != 1 || a->shape[0] != len)
        rc = file_error(slots[s].in, "shape %s does not match BUFFER slot %u shape %s", got, s, want);
      else
        bufs[s] = a->data; /* 64-byte aligned, exactly the buffer's bytes */
    } else if (!(bufs[s] = zeroed(bytes))) {
      rc = file_error(file, "out of memory for BUFFER slot %u", s);
    }
  }
  if (!rc && uopc_kernel_call(kern, bufs, nb, &e) != UOPC_OK) rc = (e.file = NULL, report(&e, file));
  for (uint32_t s = 0; s < nb && !rc && print; s++)
    if (slots[s].out) print_buffer(k, s, uopc_kernel_buf_dtype(kern, s), bufs[s], uopc_kernel_buf_len(kern, s));
  /* outputs: every temporary file first, then the renames */
  for (uint32_t s = 0; s < nb && !rc; s++) {
    if (!slots[s].out) continue;
    uopc_npy a = {.dtype = uopc_kernel_buf_dtype(kern, s), .ndim = 1, .count = uopc_kernel_buf_len(kern, s),
                  .data = bufs[s]};
    a.shape[0] = a.count;
    if (uopc_npy_save_temp(slots[s].out, &a, &tmps[s], &e)) rc = report(&e, slots[s].out);
  }
  for (uint32_t s = 0; s < nb && !rc; s++)
    if (tmps[s] && rename(tmps[s], slots[s].out) != 0) {
      char eb[128];
      rc = file_error(slots[s].out, "cannot write: %s", strerror_r(errno, eb, sizeof eb));
    } else if (tmps[s]) {
      free(tmps[s]);
      tmps[s] = NULL;
    }
  for (uint32_t s = 0; s < MAX_SLOTS; s++) {
    if (tmps[s]) unlink(tmps[s]);
    free(tmps[s]);
    if (arrays[s].data) uopc_npy_free(&arrays[s]);
    else free(bufs[s]);
  }
  uopc_kernel_free(kern);
  return rc;
}

/* ---- fuzz ---------------------------------------------------------------------------- */

typedef struct fuzz_ui {
  int tty;
  double last, start;
  size_t idx, total;
  int shown; /* a \r progress line is on the terminal */
} fuzz_ui;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void clear_line(fuzz_ui *u) {
  if (u->shown) fprintf(stderr, "\r%-78s\r", ""), u->shown = 0;
}

static void on_mismatch(void *ud, const uopc_fuzz_case *m) {
  char line[512];
  clear_line(ud);
  fprintf(stderr, "%s\n", uopc_fuzz_describe(m, line, sizeof line));
}

/* Progress on stderr: a line redrawn every 0.25 s on a terminal, else a line
   every 10 s; nothing for runs shorter than that. */
static int on_progress(void *ud, const uopc_fuzz_pair *p, uint64_t done, uint64_t total) {
  fuzz_ui *u = ud;
  double t = now_s();
  if (t - u->last < (u->tty ? 0.25 : 10.0)) return 0;
  u->last = t;
  char dt[16];
  fprintf(stderr, "%sfuzz: [%zu/%zu] %s %s: %llu/%llu cases, %.0f s%s", u->tty ? "\r" : "", u->idx + 1, u->total,
          uopc_op_spelling(p->op), uopc_fuzz_dtype_str(p, dt), (unsigned long long)done, (unsigned long long)total,
          t - u->start, u->tty ? "   " : "\n");
  u->shown = u->tty;
  return 0;
}

/* uopc fuzz: compiled ALU ops against exec_alu; a table on stdout. */
int cmd_fuzz(cli *k, int argc, char **argv) {
  const char *v, *op_s = NULL, *dt_s = NULL;
  uopc_fuzz_opts o = {.seed = 1, .count = 1000000, .tier = UOPC_TIER_FAST};
  for (int i = 0; i < argc; i++) {
    int r;
    uint64_t x;
    if ((r = opt("fuzz", argc, argv, &i, "--seed", &v))) {
      if (r < 0) return EXIT_USAGE;
      if (!parse_u64(v, &o.seed)) return verb_usage("fuzz", "--seed takes an unsigned integer, not '%s'", v);
    } else if ((r = opt("fuzz", argc, argv, &i, "--count", &v))) {
      if (r < 0) return EXIT_USAGE;
      if (!parse_u64(v, &o.count) || o.count == 0)
        return verb_usage("fuzz", "--count takes a positive integer, not '%s'", v);
    } else if ((r = opt("fuzz", argc, argv, &i, "--batch", &v))) {
      if (r < 0) return EXIT_USAGE;
      if (!parse_u64(v, &x) || x == 0 || x > (1u << 24))
        return verb_usage("fuzz", "--batch takes an integer from 1 to 16777216, not '%s'", v);
      o.batch = (uint32_t)x;
    } else if ((r = opt("fuzz", argc, argv, &i, "--op", &v))) {
      if (r < 0) return EXIT_USAGE;
      op_s = v;
    } else if ((r = opt("fuzz", argc, argv, &i, "--dtype", &v))) {
      if (r < 0) return EXIT_USAGE;
      dt_s = v;
    } else if ((r = opt("fuzz", argc, argv, &i, "--tier", &v))) {
      if (r < 0 || parse_tier("fuzz", v, &o.tier, &o.both_tiers)) return EXIT_USAGE;
    } else {
      return verb_usage("fuzz", "unknown argument '%s'", argv[i]);
    }
  }
  /* the filters */
  int op = -1, din = -1, dout = -1;
  if (op_s) {
    char low[32];
    size_t n = strlen(op_s);
    for (size_t j = 0; j < n && j < sizeof low - 1; j++) low[j] = (char)(op_s[j] >= 'A' && op_s[j] <= 'Z' ? op_s[j] + 32 : op_s[j]);
    low[n < sizeof low - 1 ? n : sizeof low - 1] = 0;
    op = n < sizeof low ? uopc_op_parse(low, strlen(low)) : -1;
    if (op < 0 || !(uopc_op_flags((uopc_op)op) & UOPC_OPF_ALU)) return verb_usage("fuzz", "--op: '%s' is not an ALU op", op_s);
  }
  if (dt_s) {
    const char *colon = strchr(dt_s, ':');
    size_t n1 = colon ? (size_t)(colon - dt_s) : strlen(dt_s);
    din = uopc_dtype_parse(dt_s, n1);
    if (colon) dout = uopc_dtype_parse(colon + 1, strlen(colon + 1));
    if (din < 0 || din == UOPC_DT_VOID || (colon && (dout < 0 || dout == UOPC_DT_VOID)))
      return verb_usage("fuzz", "--dtype takes bool, i32, f32, f16 or IN:OUT (f32:i32), not '%s'", dt_s);
  }
  size_t np, sel[64], ns = 0;
  const uopc_fuzz_pair *pairs = uopc_fuzz_pairs(&np);
  for (size_t j = 0; j < np && ns < 64; j++)
    if ((op < 0 || (int)pairs[j].op == op) && (din < 0 || (int)pairs[j].in_t == din) &&
        (dout < 0 || (int)pairs[j].out_t == dout))
      sel[ns++] = j;
  if (!ns)
    return verb_usage("fuzz", "no (op, dtype) pair of the IR matches%s%s%s%s", op_s ? " --op " : "", op_s ? op_s : "",
                      dt_s ? " --dtype " : "", dt_s ? dt_s : "");

  fuzz_ui ui = {.tty = isatty(2), .start = now_s(), .total = ns};
  ui.last = ui.start;
  o.on_mismatch = on_mismatch;
  o.on_progress = on_progress;
  o.ud = &ui;
  uopc_fuzz_stats tot = {0};
  int rc = EXIT_OK;
  out_fmt(k, "%-9s %-10s %12s %10s %10s %10s\n", "op", "dtype", "cases", "refused", "mismatches", "Mcases/s");
  for (size_t j = 0; j < ns; j++) {
    ui.idx = j;
    uopc_fuzz_stats s;
    uopc_error e;
    if (uopc_fuzz_run(&pairs[sel[j]], &o, &s, &e) != UOPC_OK) {
      clear_line(&ui);
      return report(&e, "uopc fuzz");
    }
    char dt[16];
    double rate = s.seconds > 0 ? (double)(s.cases + s.refused) / s.seconds / 1e6 : 0;
    out_fmt(k, "%-9s %-10s %12llu %10llu %10llu %10.1f\n", uopc_op_spelling(pairs[sel[j]].op),
            uopc_fuzz_dtype_str(&pairs[sel[j]], dt), (unsigned long long)s.cases, (unsigned long long)s.refused,
            (unsigned long long)s.mismatches, rate);
    tot.cases += s.cases, tot.refused += s.refused, tot.mismatches += s.mismatches;
    tot.seconds += s.seconds, tot.compile_ms += s.compile_ms;
  }
  clear_line(&ui);
  out_fmt(k, "%-20s %12llu %10llu %10llu %10.1f\n", "total", (unsigned long long)tot.cases,
          (unsigned long long)tot.refused, (unsigned long long)tot.mismatches,
          tot.seconds > 0 ? (double)(tot.cases + tot.refused) / tot.seconds / 1e6 : 0);
  out_fmt(k, "seed %llu, tier %s, batch %u, %zu pair%s, %.1f s running, %.0f ms compiling\n", (unsigned long long)o.seed,
          o.both_tiers ? "both" : tier_name(o.tier), o.batch ? o.batch : 4095, ns, ns == 1 ? "" : "s", tot.seconds,
          tot.compile_ms);
  if (tot.mismatches) {
    /* the table still goes to stdout; the status says it failed */
    fwrite(k->out, 1, k->n, stdout);
    fflush(stdout);
    k->n = 0;
    fprintf(stderr, "uopc fuzz: error: %llu mismatch%s (reproducers above)\n", (unsigned long long)tot.mismatches,
            tot.mismatches == 1 ? "" : "es");
    rc = EXIT_ERR;
  }
  return rc;
}
