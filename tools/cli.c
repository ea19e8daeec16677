/* tools/cli.c - output, errors and input for the verbs. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli.h"

/* ---- output and errors -------------------------------------------------- */

/* Moves out_take's string into the buffer, when more output follows it. */
static void untake(cli *k) {
  char *t = k->tail;
  size_t n = k->tail_n;
  k->tail = NULL;
  out_put(k, t, n);
  uopc_mem_free(k->c, t, n + 1);
}

void out_put(cli *k, const char *s, size_t n) {
  if (k->tail) untake(k);
  if (k->oom) return;
  if (k->n + n + 1 > k->cap) {
    size_t cap = k->cap ? k->cap : 4096;
    while (cap < k->n + n + 1) cap *= 2;
    char *p = realloc(k->out, cap);
    if (!p) {
      k->oom = 1;
      return;
    }
    k->out = p;
    k->cap = cap;
  }
  memcpy(k->out + k->n, s, n);
  k->n += n;
}

void out_str(cli *k, const char *s) { out_put(k, s, strlen(s)); }

void out_take(cli *k, char *s) {
  if (!s) return;
  if (k->tail) untake(k);
  k->tail = s;
  k->tail_n = strlen(s);
}

int out_graph(cli *k, uopc_node *root, const char *file) {
  if (k->n || k->tail || k->oom) {
    char *s = uopc_uir_print(k->c, root);
    if (!s) return report_ctx(k, file);
    out_take(k, s);
    return EXIT_OK;
  }
  if (uopc_uir_write(k->c, root, stdout) != 0) return report_ctx(k, file);
  return EXIT_OK;
}

int out_flush(cli *k) {
  int ok = 1;
  if (k->n && fwrite(k->out, 1, k->n, stdout) != k->n) ok = 0;
  if (ok && k->tail_n && fwrite(k->tail, 1, k->tail_n, stdout) != k->tail_n) ok = 0;
  if (fflush(stdout) != 0) ok = 0;
  return ok ? 0 : -1;
}

/* `FILE:LINE:COL: error: MESSAGE`, or `FILE: error: MESSAGE` where no line
   applies.  file is used when the error names none. */
int report(const uopc_error *e, const char *file) {
  const char *f = e && e->file ? e->file : file ? file : "uopc";
  const char *msg = e && e->msg[0] ? e->msg : "unknown error";
  if (e && e->line > 0) fprintf(stderr, "%s:%d:%d: error: %s\n", f, e->line, e->col, msg);
  else fprintf(stderr, "%s: error: %s\n", f, msg);
  return EXIT_ERR;
}

/* The context's recorded error, reported against file. */
int report_ctx(cli *k, const char *file) {
  const uopc_error *e = uopc_ctx_error(k->c);
  uopc_error none = {.code = UOPC_ERR_NOMEM, .msg = "out of memory"};
  uopc_error copy = e ? *e : none;
  copy.file = NULL;
  return report(&copy, file);
}

void out_fmt(cli *k, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n > 0) out_put(k, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

int verb_usage(const char *verb, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "uopc %s: ", verb);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n(uopc --help lists the verbs and their arguments)\n");
  return EXIT_USAGE;
}

int parse_compile_flag(const char *a, unsigned *flags) {
  static const struct {
    const char *opt;
    unsigned bit;
  } opts[] = {{"--fast-math", UOPC_COMPILE_FAST_MATH},
              {"--hot", UOPC_COMPILE_HOT},
              {"--stream", UOPC_COMPILE_STREAM},
              {"--no-stream", UOPC_COMPILE_NO_STREAM}};
  for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
    if (strcmp(a, opts[i].opt) == 0) return *flags |= opts[i].bit, 1;
  return 0;
}

void *guarded_alloc(size_t bytes, guarded *g) {
  long ps = sysconf(_SC_PAGESIZE);
  size_t page = ps > 0 ? (size_t)ps : 4096, data = (bytes + page - 1) / page * page;
  *g = (guarded){0};
  char *m = mmap(NULL, data + 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return NULL;
  if (data && mprotect(m + page, data, PROT_READ | PROT_WRITE) != 0) {
    munmap(m, data + 2 * page);
    return NULL;
  }
  *g = (guarded){m, data + 2 * page};
  return m + page + data - bytes; /* fresh anonymous pages: zeroed */
}

void guarded_free(guarded *g) {
  if (g->map) munmap(g->map, g->size);
  *g = (guarded){0};
}

int parse_threads(const char *verb, const char *s, uint32_t *out) {
  size_t n = strspn(s, "0123456789");
  long v = n && n <= 3 && !s[n] && s[0] != '0' ? strtol(s, NULL, 10) : 0;
  if (v < 1 || v > 64) return verb_usage(verb, "--threads takes a thread count from 1 to 64, not '%s'", s);
  *out = (uint32_t)v;
  return EXIT_OK;
}


/* ---- arguments after `--` ----------------------------------------------- */

/* The verbs take an argument that starts with '-' for an option.  After
   `--`, main passes such an argument as "./ARG" instead (the same file for
   every verb that takes a path), and load() names the file as it was
   written.  Declared in tools/uopc.c. */
const char *cli_positional(const char *arg);
void cli_positional_free(void);

typedef struct escaped {
  struct escaped *next;
  const char *orig;
  char path[]; /* "./" orig */
} escaped;
static escaped *escapes;

/* arg itself, or for an arg that starts with '-' (other than "-", standard
   input) a "./arg" copy; NULL when out of memory. */
const char *cli_positional(const char *arg) {
  if (arg[0] != '-' || !arg[1]) return arg;
  size_t n = strlen(arg);
  escaped *e = malloc(sizeof *e + n + 3);
  if (!e) return NULL;
  e->orig = arg;
  memcpy(e->path, "./", 2);
  memcpy(e->path + 2, arg, n + 1);
  e->next = escapes;
  escapes = e;
  return e->path;
}

void cli_positional_free(void) {
  while (escapes) {
    escaped *e = escapes;
    escapes = e->next;
    free(e);
  }
}

/* The argument as the user wrote it, for a path cli_positional made; NULL
   for any other path. */
static const char *escaped_name(const char *path) {
  for (escaped *e = escapes; e; e = e->next)
    if (e->path == path) return e->orig;
  return NULL;
}

/* ---- input -------------------------------------------------------------- */

/* All of f into a malloc'd buffer (*n bytes); NULL with errno on failure. */
static char *read_all(FILE *f, size_t *n) {
  char *buf = NULL;
  size_t cap = 0;
  *n = 0;
  for (;;) {
    if (*n == cap) {
      cap = cap ? cap * 2 : 65536;
      char *p = realloc(buf, cap);
      if (!p) {
        free(buf);
        errno = ENOMEM;
        return NULL;
      }
      buf = p;
    }
    size_t got = fread(buf + *n, 1, cap - *n, f);
    *n += got;
    if (got == 0) break;
  }
  if (ferror(f)) {
    int err = errno ? errno : EIO;
    free(buf);
    errno = err;
    return NULL;
  }
  return buf;
}

/* Parses a .uir file, or standard input when path is "-".  NULL after
   reporting the error. */
uopc_node *load(cli *k, const char *path) {
  uopc_error e;
  const char *name = escaped_name(path);
  if (strcmp(path, "-") != 0 && !name) {
    uopc_node *root = uopc_uir_parse_file(k->c, path, &e);
    if (!root) report(&e, path);
    return root;
  }
  int is_stdin = !name;
  if (is_stdin) name = "<stdin>";
  FILE *f = is_stdin ? stdin : fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "%s: error: cannot open: %s\n", name, strerror(errno));
    return NULL;
  }
  size_t n;
  errno = 0;
  char *buf = read_all(f, &n);
  int err = errno;
  if (!is_stdin) fclose(f);
  if (!buf) {
    if (err == ENOMEM) fprintf(stderr, "%s: error: out of memory\n", name);
    else fprintf(stderr, "%s: error: cannot read: %s\n", name, strerror(err));
    return NULL;
  }
  uopc_node *root = uopc_uir_parse(k->c, buf, n, name, &e);
  free(buf);
  if (!root) report(&e, name);
  return root;
}
