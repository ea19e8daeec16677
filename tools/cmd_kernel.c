/* tools/cmd_kernel.c - verbs on kernels: compile, exec, fuzz.
 *
 *   uopc compile [--emit=llvm|asm] [--tier=fast|strong] [--fast-math] [--hot] [--stream|--no-stream] FILE.uir
 *   uopc exec FILE.uir [--arg S=IN.npy]... [--out S=OUT.npy | --out OUT.npy] [--tier=fast|strong] [--fast-math] [--hot] [--stream|--no-stream] [--threads N] [--print] [--bench N]
 *   uopc fuzz [--seed S] [--count N] [--op OP] [--dtype D|IN:OUT] [--tier=fast|strong|both] [--batch N] [--self-test]
 *
 * docs/cli.md documents them.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
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
    } else if (parse_compile_flag(argv[i], &o.flags)) { /* --fast-math, --hot, --stream, --no-stream */
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
  char *s;
  if (uopc_op_flags((uopc_op)root->op) & UOPC_OPF_EFFECT) /* a kernel; else a program: every kernel of its plan */
    s = asm_out ? uopc_emit_asm(k->c, root, &o, &e) : uopc_emit_llvm(k->c, root, &o, &e);
  else
    s = uopc_plan_emit(k->c, root, &o, asm_out, &e);
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

typedef struct exec_opts {
  slot_io slots[MAX_SLOTS];
  const char *out;      /* a program's result (--out FILE, no slot) */
  int print;
  int guard;            /* --guard-pages: a kernel's buffers, or a program's arguments, result,
                           temporaries and constants, between inaccessible pages */
  uint64_t bench;       /* --bench N: N timed calls after one warm-up */
  uopc_compile_opts o;
} exec_opts;

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
  if (v >= MAX_SLOTS) return verb_usage("exec", "%s: no kernel or program has a slot %s (at most %d)", flag, num, MAX_SLOTS - 1);
  const char **p = is_out ? &slots[v].out : &slots[v].in;
  if (*p) return verb_usage("exec", "%s %s= is given twice", flag, num);
  *p = eq + 1;
  return EXIT_OK;
}

/* "(32,)" for a shape. */
static void shape_str(const int64_t *shape, uint32_t nd, char *buf, size_t n) {
  size_t len = (size_t)snprintf(buf, n, "(");
  for (uint32_t i = 0; i < nd && len < n; i++)
    len += (size_t)snprintf(buf + len, n - len, "%s%lld", i ? ", " : "", (long long)shape[i]);
  if (len < n) snprintf(buf + len, n - len, "%s)", nd == 1 ? "," : "");
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

/* ---- writing outputs -----------------------------------------------------------------
 * A regular file (or a path that does not exist yet) is written all or
 * nothing: every output to a temporary next to its target first, then the
 * renames.  A symlink is followed: the file it points to is replaced, the
 * link stays.  A FIFO, a device or a socket (/dev/stdout, a pipe) cannot be
 * replaced: it is opened and written in place, after the renames. */

typedef struct out_file {
  const char *path;     /* as the user wrote it (for messages) */
  char *target;         /* where the data goes (symlinks followed), malloc'd */
  int direct;           /* not a regular file: written in place */
  char *tmp;            /* the temporary, before its rename */
  uopc_npy a;
} out_file;

static int out_prepare(out_file *f, uopc_error *e) {
  struct stat st;
  char eb[128];
  f->target = NULL, f->tmp = NULL, f->direct = 0;
  if (stat(f->path, &st) == 0) {
    f->direct = !S_ISREG(st.st_mode);
    if (S_ISDIR(st.st_mode)) return snprintf(e->msg, sizeof e->msg, "is a directory"), e->code = UOPC_ERR_IO;
    /* a regular file: the one a symlink points to; else the path itself */
    f->target = f->direct ? strdup(f->path) : realpath(f->path, NULL);
  } else if (errno == ENOENT) {
    char link[4096];
    ssize_t n = readlink(f->path, link, sizeof link - 1); /* a dangling symlink: create its target */
    if (n > 0) {
      link[n] = 0;
      const char *slash = strrchr(f->path, '/');
      if (link[0] != '/' && slash) {
        size_t dir = (size_t)(slash - f->path) + 1;
        f->target = malloc(dir + (size_t)n + 1);
        if (f->target) memcpy(f->target, f->path, dir), memcpy(f->target + dir, link, (size_t)n + 1);
      } else {
        f->target = strdup(link);
      }
    } else {
      f->target = strdup(f->path);
    }
  } else {
    snprintf(e->msg, sizeof e->msg, "cannot write: %s", strerror_r(errno, eb, sizeof eb));
    return e->code = UOPC_ERR_IO;
  }
  if (!f->target) return snprintf(e->msg, sizeof e->msg, "out of memory"), e->code = UOPC_ERR_NOMEM;
  if (f->direct) return UOPC_OK;
  return uopc_npy_save_temp(f->target, &f->a, &f->tmp, e);
}

static int out_direct(out_file *f, uopc_error *e) {
  size_t size;
  char eb[128];
  void *bytes = uopc_npy_encode(&f->a, &size, e);
  if (!bytes) return e->code;
  int fd = open(f->target, O_WRONLY | O_CLOEXEC);
  int ok = fd >= 0;
  for (size_t done = 0; ok && done < size;) {
    ssize_t w = write(fd, (const char *)bytes + done, size - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) ok = 0;
    else done += (size_t)w;
  }
  if (!ok) snprintf(e->msg, sizeof e->msg, "cannot write: %s", strerror_r(errno, eb, sizeof eb)), e->code = UOPC_ERR_IO;
  if (fd >= 0) close(fd);
  free(bytes);
  return ok ? UOPC_OK : e->code;
}

/* Writes every output (all or none for regular files).  Reports the first
   error; EXIT_OK or EXIT_ERR. */
static int write_outputs(out_file *f, uint32_t n) {
  uopc_error e;
  int rc = EXIT_OK;
  uint32_t i = 0;
  for (; i < n && !rc; i++) {
    memset(&e, 0, sizeof e);
    if (out_prepare(&f[i], &e)) rc = report(&e, f[i].path);
  }
  for (uint32_t j = 0; j < n && !rc; j++)
    if (f[j].tmp && rename(f[j].tmp, f[j].target) != 0) {
      char eb[128];
      rc = file_error(f[j].path, "cannot write: %s", strerror_r(errno, eb, sizeof eb));
    } else if (f[j].tmp) {
      free(f[j].tmp);
      f[j].tmp = NULL;
    }
  for (uint32_t j = 0; j < n && !rc; j++)
    if (f[j].direct && out_direct(&f[j], &e)) rc = report(&e, f[j].path);
  for (uint32_t j = 0; j < n; j++) {
    if (f[j].tmp) unlink(f[j].tmp);
    free(f[j].tmp);
    free(f[j].target);
  }
  return rc;
}

/* ---- --bench N ---------------------------------------------------------------------- */

typedef uopc_status (*call_fn)(void *ud, uopc_error *e);

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* n timed calls; prints "bench: N calls, median X ms, min Y ms, max Z ms" on stderr. */
static int bench(call_fn f, void *ud, uint64_t n, const char *file) {
  double *t = malloc(n * sizeof *t);
  if (!t) return fprintf(stderr, "%s: error: out of memory for --bench\n", file), EXIT_ERR;
  uopc_error e;
  for (uint64_t i = 0; i < n; i++) {
    double a = now_ms();
    if (f(ud, &e) != UOPC_OK) {
      free(t);
      return e.file = e.file ? e.file : NULL, report(&e, file);
    }
    t[i] = now_ms() - a;
  }
  qsort(t, n, sizeof *t, cmp_double);
  double med = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
  fprintf(stderr, "bench: %llu calls, median %.6f ms, min %.6f ms, max %.6f ms\n", (unsigned long long)n, med, t[0],
          t[n - 1]);
  free(t);
  return EXIT_OK;
}

/* ---- exec of a kernel ----------------------------------------------------------------- */

typedef struct kcall {
  const uopc_kernel *k;
  void **bufs;
  uint32_t n;
} kcall;

static uopc_status kernel_call_fn(void *ud, uopc_error *e) {
  kcall *c = ud;
  return uopc_kernel_call(c->k, c->bufs, c->n, e);
}

/* --guard-pages: each buffer copied into pages of its own (guarded_alloc:
   they end where the buffer ends, between inaccessible pages), so that a
   read or write past the end (or before the start) ends the process with
   SIGSEGV instead of passing unseen: the spec's "a kernel never reads or
   writes outside its buffers", checked (docs/hardening.md).  The buffers'
   start is then aligned only as their byte count allows, so the streaming
   copy of a kernel may not be taken.  Returns the call's status; the
   buffers get the results back. */
static uopc_status guarded_call(kcall *c, uopc_error *e) {
  void *moved[MAX_SLOTS] = {0};
  guarded map[MAX_SLOTS] = {{0}};
  size_t bytes[MAX_SLOTS] = {0};
  uopc_status st = UOPC_OK;
  for (uint32_t s = 0; s < c->n && st == UOPC_OK; s++) {
    bytes[s] = (size_t)uopc_kernel_buf_len(c->k, s) * uopc_dtype_size(uopc_kernel_buf_dtype(c->k, s));
    if (!(moved[s] = guarded_alloc(bytes[s], &map[s]))) {
      *e = (uopc_error){.code = UOPC_ERR_NOMEM}; /* no position: report() prints line:col when set */
      snprintf(e->msg, sizeof e->msg, "--guard-pages: cannot map %zu bytes", bytes[s]);
      st = UOPC_ERR_NOMEM;
      break;
    }
    if (bytes[s]) memcpy(moved[s], c->bufs[s], bytes[s]);
  }
  if (st == UOPC_OK) st = uopc_kernel_call(c->k, moved, c->n, e);
  for (uint32_t s = 0; s < c->n; s++) {
    if (st == UOPC_OK && bytes[s]) memcpy(c->bufs[s], moved[s], bytes[s]);
    guarded_free(&map[s]);
  }
  return st;
}

static int exec_kernel(cli *k, const char *file, uopc_node *root, exec_opts *x) {
  if (x->out) return verb_usage("exec", "a kernel's outputs are buffers: --out S=OUT.npy, not --out %s", x->out);
  slot_io *slots = x->slots;
  uopc_error e;
  uopc_kernel *kern = uopc_compile(k->c, root, &x->o, &e);
  if (!kern) return e.file = NULL, report(&e, file);
  uint32_t nb = uopc_kernel_nbufs(kern);
  void *bufs[MAX_SLOTS] = {0};
  uopc_npy arrays[MAX_SLOTS];
  out_file outs[MAX_SLOTS];
  uint32_t nouts = 0;
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
      char got[64 * 22 + 8];
      shape_str(a->shape, a->ndim, got, sizeof got);
      if (a->dtype != t)
        rc = file_error(slots[s].in, "dtype %s (%s) does not match BUFFER slot %u dtype %s (%s)", uopc_npy_descr(a->dtype),
                        uopc_dtype_name(a->dtype), s, uopc_dtype_name(t), uopc_npy_descr(t));
      else if (a->ndim != 1 || a->shape[0] != len)
        rc = file_error(slots[s].in, "shape %s does not match BUFFER slot %u shape (%lld,)", got, s, (long long)len);
      else
        bufs[s] = a->data; /* 64-byte aligned, exactly the buffer's bytes */
    } else if (!(bufs[s] = zeroed(bytes))) {
      rc = file_error(file, "out of memory for BUFFER slot %u", s);
    }
  }
  kcall kc = {kern, bufs, nb};
  if (!rc && (x->guard ? guarded_call(&kc, &e) : kernel_call_fn(&kc, &e)) != UOPC_OK)
    rc = (e.file = NULL, report(&e, file));
  /* the outputs of the first call (copies, when --bench calls again) */
  for (uint32_t s = 0; s < nb && !rc; s++) {
    if (!slots[s].out) continue;
    out_file *f = &outs[nouts++];
    memset(f, 0, sizeof *f);
    f->path = slots[s].out;
    f->a = (uopc_npy){.dtype = uopc_kernel_buf_dtype(kern, s), .ndim = 1, .count = uopc_kernel_buf_len(kern, s)};
    f->a.shape[0] = f->a.count;
    size_t bytes = (size_t)f->a.count * uopc_dtype_size(f->a.dtype);
    if (!(f->a.data = x->bench ? zeroed(bytes) : bufs[s])) rc = file_error(file, "out of memory");
    else if (x->bench) memcpy(f->a.data, bufs[s], bytes);
    if (!rc && x->print) print_buffer(k, s, f->a.dtype, f->a.data, f->a.count);
  }
  if (!rc && x->bench) rc = bench(kernel_call_fn, &kc, x->bench, file);
  if (!rc) rc = write_outputs(outs, nouts);
  for (uint32_t j = 0; j < nouts; j++)
    if (x->bench) free(outs[j].a.data);
  for (uint32_t s = 0; s < MAX_SLOTS; s++) {
    if (arrays[s].data) uopc_npy_free(&arrays[s]);
    else free(bufs[s]);
  }
  uopc_kernel_free(kern);
  return rc;
}

/* ---- exec of a tensor program ---------------------------------------------------------- */

typedef struct pcall {
  const uopc_plan *p;
  uopc_tensor *args;
  uint32_t nargs;
  uopc_tensor *out;
} pcall;

static uopc_status plan_call_fn(void *ud, uopc_error *e) {
  pcall *c = ud;
  return uopc_plan_call(c->p, c->args, c->nargs, c->out, e);
}

static int exec_program(cli *k, const char *file, uopc_node *root, exec_opts *x) {
  for (int s = 0; s < MAX_SLOTS; s++)
    if (x->slots[s].out)
      return verb_usage("exec", "a program has one result: --out OUT.npy (no slot), not --out %d=%s", s, x->slots[s].out);
  uopc_error e;
  if (x->guard) x->o.flags |= UOPC_COMPILE_GUARD_PAGES; /* the plan's own arrays */
  uopc_plan *p = uopc_plan_compile(k->c, root, &x->o, &e);
  if (!p) return report(&e, file);
  uint32_t na = uopc_plan_nargs(p);
  guarded gmap[MAX_SLOTS + 1]; /* --guard-pages: the arguments' copies, the result */
  memset(gmap, 0, sizeof gmap);
  int rc = EXIT_OK;
  uopc_npy arrays[MAX_SLOTS];
  uopc_tensor args[MAX_SLOTS];
  memset(arrays, 0, sizeof arrays);
  memset(args, 0, sizeof args);
  char want[64 * 22 + 8], got[64 * 22 + 8];
  for (uint32_t s = 0; s < MAX_SLOTS && !rc; s++) {
    uopc_dtype t;
    uint32_t nd;
    const int64_t *shape;
    int used = s < na && uopc_plan_arg(p, s, &t, &nd, &shape);
    if (!used && x->slots[s].in) {
      rc = file_error(file, "--arg %u=: the program has no PARAM of slot %u", s, s);
    } else if (used && !x->slots[s].in) {
      shape_str(shape, nd, want, sizeof want);
      rc = file_error(file, "PARAM slot %u (%s, shape %s) is not given: --arg %u=IN.npy", s, uopc_dtype_name(t), want, s);
    } else if (used) {
      uopc_npy *a = &arrays[s];
      if (uopc_npy_read(x->slots[s].in, a, &e)) {
        rc = report(&e, x->slots[s].in);
        break;
      }
      int same = a->dtype == t && a->ndim == nd;
      for (uint32_t d = 0; same && d < nd; d++) same = a->shape[d] == shape[d];
      shape_str(shape, nd, want, sizeof want);
      shape_str(a->shape, a->ndim, got, sizeof got);
      if (!same)
        rc = file_error(x->slots[s].in, "%s%s does not match PARAM slot %u, %s%s", uopc_dtype_name(a->dtype), got, s,
                        uopc_dtype_name(t), want);
      args[s] = (uopc_tensor){a->data, t, nd, shape};
      size_t ab = (size_t)a->count * uopc_dtype_size(t);
      if (!rc && x->guard) {
        if (!(args[s].data = guarded_alloc(ab, &gmap[s]))) rc = file_error(file, "--guard-pages: cannot map %zu bytes", ab);
        else if (ab) memcpy(args[s].data, a->data, ab);
      }
    }
  }
  uopc_tensor out = {0};
  const int64_t *oshape;
  uopc_plan_result(p, &out.dtype, &out.ndim, &oshape);
  out.shape = oshape;
  int64_t n = 1;
  for (uint32_t d = 0; d < out.ndim; d++) n *= oshape[d];
  size_t bytes = (size_t)n * uopc_dtype_size(out.dtype);
  if (!rc && !(out.data = x->guard ? guarded_alloc(bytes, &gmap[MAX_SLOTS]) : zeroed(bytes)))
    rc = file_error(file, "out of memory for the result");
  pcall pc = {p, args, na, &out};
  if (!rc && plan_call_fn(&pc, &e) != UOPC_OK) rc = report(&e, file);
  out_file of;
  memset(&of, 0, sizeof of);
  of.a = (uopc_npy){.dtype = out.dtype, .ndim = out.ndim, .count = n};
  for (uint32_t d = 0; d < out.ndim; d++) of.a.shape[d] = oshape[d];
  if (!rc && x->out) {
    of.path = x->out;
    if (!(of.a.data = x->bench ? zeroed(bytes) : out.data)) rc = file_error(file, "out of memory");
    else if (x->bench) memcpy(of.a.data, out.data, bytes);
  }
  if (!rc && x->print) { /* exactly what `uopc run` prints */
    char *s = uopc_tensor_print(k->c, &out);
    if (!s) rc = report_ctx(k, file);
    else {
      out_str(k, s);
      out_str(k, "\n");
      uopc_mem_free(k->c, s, strlen(s) + 1);
    }
  }
  if (!rc && x->bench) rc = bench(plan_call_fn, &pc, x->bench, file);
  if (!rc && x->out) rc = write_outputs(&of, 1);
  if (x->bench) free(of.a.data);
  if (!x->guard) free(out.data);
  for (int s = 0; s <= MAX_SLOTS; s++) guarded_free(&gmap[s]);
  for (uint32_t s = 0; s < MAX_SLOTS; s++)
    if (arrays[s].data) uopc_npy_free(&arrays[s]);
  uopc_plan_free(p);
  return rc;
}

/* uopc exec: a kernel on buffers, or a tensor program on arrays, read from
   and written to .npy files. */
int cmd_exec(cli *k, int argc, char **argv) {
  const char *file = NULL, *v;
  exec_opts x;
  memset(&x, 0, sizeof x);
  x.o.tier = UOPC_TIER_FAST;
  for (int i = 0; i < argc; i++) {
    int r;
    if ((r = opt("exec", argc, argv, &i, "--arg", &v))) {
      if (r < 0 || slot_arg("--arg", v, x.slots, 0)) return EXIT_USAGE;
    } else if ((r = opt("exec", argc, argv, &i, "--out", &v))) {
      if (r < 0) return EXIT_USAGE;
      const char *eq = strchr(v, '=');
      int slotted = eq && eq > v && (size_t)(eq - v) == strspn(v, "0123456789");
      if (slotted) {
        if (slot_arg("--out", v, x.slots, 1)) return EXIT_USAGE;
      } else if (x.out) {
        return verb_usage("exec", "--out is given twice");
      } else {
        x.out = v;
      }
    } else if ((r = opt("exec", argc, argv, &i, "--tier", &v))) {
      if (r < 0 || parse_tier("exec", v, &x.o.tier, NULL)) return EXIT_USAGE;
    } else if ((r = opt("exec", argc, argv, &i, "--threads", &v))) {
      if (r < 0 || parse_threads("exec", v, &x.o.threads)) return EXIT_USAGE;
    } else if ((r = opt("exec", argc, argv, &i, "--bench", &v))) {
      if (r < 0) return EXIT_USAGE;
      if (!parse_u64(v, &x.bench) || x.bench == 0 || x.bench > 100000000)
        return verb_usage("exec", "--bench takes a number of calls from 1 to 100000000, not '%s'", v);
    } else if (strcmp(argv[i], "--print") == 0) {
      x.print = 1;
    } else if (strcmp(argv[i], "--guard-pages") == 0) {
      x.guard = 1;
    } else if (parse_compile_flag(argv[i], &x.o.flags)) { /* --fast-math, --hot, --stream, --no-stream */
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
      if (x.slots[s].out && x.slots[t].out && strcmp(x.slots[s].out, x.slots[t].out) == 0)
        return verb_usage("exec", "--out %d and --out %d write the same file '%s'", s, t, x.slots[s].out);
  uopc_node *root = load(k, file);
  if (!root) return EXIT_ERR;
  if (uopc_op_flags((uopc_op)root->op) & UOPC_OPF_EFFECT) return exec_kernel(k, file, root, &x);
  return exec_program(k, file, root, &x);
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
      if (!parse_u64(v, &o.count) || o.count == 0 || o.count > UOPC_FUZZ_MAX_COUNT)
        return verb_usage("fuzz", "--count takes a positive integer up to 2^50 (%llu), not '%s'",
                          (unsigned long long)UOPC_FUZZ_MAX_COUNT, v);
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
    } else if (!strcmp(argv[i], "--self-test")) {
      o.self_test = 1;
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
  o.on_mismatch = o.self_test ? NULL : on_mismatch; /* a self-test's mismatches are its own */
  o.on_progress = on_progress;
  o.ud = &ui;
  uopc_fuzz_stats tot = {0};
  int rc = EXIT_OK;
  size_t missed = 0; /* self-test: triples where a corrupted output was not found (or none was made) */
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
    if (o.self_test && (s.mismatches != s.injected || !s.injected)) missed++;
    tot.cases += s.cases, tot.refused += s.refused, tot.mismatches += s.mismatches, tot.injected += s.injected;
    tot.seconds += s.seconds, tot.compile_ms += s.compile_ms;
  }
  clear_line(&ui);
  out_fmt(k, "%-20s %12llu %10llu %10llu %10.1f\n", "total", (unsigned long long)tot.cases,
          (unsigned long long)tot.refused, (unsigned long long)tot.mismatches,
          tot.seconds > 0 ? (double)(tot.cases + tot.refused) / tot.seconds / 1e6 : 0);
  out_fmt(k, "seed %llu, tier %s, batch %u, %zu pair%s, %.1f s running, %.0f ms compiling\n", (unsigned long long)o.seed,
          o.both_tiers ? "both" : tier_name(o.tier), o.batch ? o.batch : 4095, ns, ns == 1 ? "" : "s", tot.seconds,
          tot.compile_ms);
  if (o.self_test) {
    /* every corrupted output must come back as a mismatch, and nothing else */
    out_fmt(k, "self-test: %llu outputs corrupted on purpose, %llu mismatches found, %zu of %zu triples %s\n",
            (unsigned long long)tot.injected, (unsigned long long)tot.mismatches, ns - missed, ns,
            missed ? "exact (FAILED)" : "exact");
    if (missed) {
      fwrite(k->out, 1, k->n, stdout);
      fflush(stdout);
      k->n = 0;
      fprintf(stderr, "uopc fuzz: error: self-test: in %zu triple%s the mismatches found are not the outputs corrupted\n",
              missed, missed == 1 ? "" : "s");
      rc = EXIT_ERR;
    }
  } else if (tot.mismatches) {
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
