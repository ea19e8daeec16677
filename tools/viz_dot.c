/* tools/viz_dot.c - layout by Graphviz: the `dot` program, run at run time.
 *
 * Every picture of a page is laid out by a few `dot -Tplain` processes, not
 * one process per picture: the pictures are dealt to at most one process a
 * core (4 at most), biggest first to the least loaded; each process reads
 * one file of many graphs and writes their layouts one after another, which
 * are read back in order.  -Tplain gives boxes and edge splines only (a few
 * dozen bytes a box, where -Tsvg gives several hundred); the page draws the
 * SVG of the picture on screen from it.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "viz.h"

extern char **environ;

const char *vz_dot_path(void) {
  static char path[4096];
  const char *p = getenv("PATH");
  if (!p || !*p) p = "/usr/bin:/bin";
  while (*p) {
    const char *e = strchr(p, ':');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (n && n + 5 < sizeof path) {
      memcpy(path, p, n);
      memcpy(path + n, "/dot", 5);
      struct stat st;
      if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0) return path;
    }
    p += n + (e ? 1 : 0);
  }
  return NULL;
}

/* ---- the input ------------------------------------------------------------- */

/* A label in dot's quoted string: '\n' as \n, " and \ escaped, control
   bytes as '?'. */
static void put_dot_label(FILE *f, const char *s) {
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '\n') fputs("\\n", f);
    else if (ch == '"' || ch == '\\') fputc('\\', f), fputc(ch, f);
    else if (ch < 0x20 || ch == 0x7f) fputc('?', f);
    else fputc(ch, f);
  }
}

static int write_graph(FILE *f, const vz_draw *d, vz_labels *L) {
  fprintf(f, "digraph g {\n graph [ordering=in, nodesep=0.2, ranksep=0.3%s];\n",
          d->big ? ", mclimit=0.3, nslimit=2, nslimit1=2, searchsize=20" : "");
  fputs(" node [shape=box, style=rounded, fontname=\"monospace\", fontsize=10, margin=\"0.06,0.03\", height=0.3, width=0.3];\n"
        " edge [arrowsize=0.6];\n", f);
  for (uint32_t i = 0; i < d->n; i++) {
    const vz_item *it = &d->it[i];
    const char *l = it->label ? it->label : vz_label(L, it->node);
    if (!l) return 0;
    fprintf(f, " i%u [label=\"", i);
    put_dot_label(f, l);
    fputs("\"];\n", f);
  }
  for (uint32_t i = 0; i < d->ne; i++)
    fprintf(f, " i%u -> i%u%s;\n", d->e[i].from, d->e[i].to, d->e[i].rw ? " [style=dashed, constraint=false]" : "");
  fputs("}\n", f);
  return !ferror(f);
}

/* ---- the output --------------------------------------------------------------- */

static int pt(double inches) { return (int)(inches * 72.0 + (inches >= 0 ? 0.5 : -0.5)); }

/* One graph of -Tplain from *p (advanced past its "stop" line) as the JSON
   of d.  0 on malformed input. */
static int read_graph(char **p, const vz_draw *d, vz_buf *out) {
  double W = 0, H = 0;
  int32_t *box = calloc((size_t)d->n * 4 + 4, sizeof *box);
  uint8_t *seen = calloc((size_t)d->n + 1, 1);
  vz_buf e = {0};
  int ok = box && seen, done = 0;
  vz_puts(&e, "");
  int first_edge = 1;
  while (ok && !done && **p) {
    char *line = *p, *nl = strchr(line, '\n');
    *p = nl ? nl + 1 : line + strlen(line);
    if (nl) *nl = 0;
    if (strncmp(line, "graph ", 6) == 0) {
      double sc;
      ok = sscanf(line + 6, "%lf %lf %lf", &sc, &W, &H) == 3;
    } else if (strncmp(line, "node ", 5) == 0) {
      unsigned k;
      double x, y, w, h;
      ok = sscanf(line + 5, "i%u %lf %lf %lf %lf", &k, &x, &y, &w, &h) == 5 && k < d->n;
      if (ok) {
        box[4 * k] = pt(x), box[4 * k + 1] = pt(H - y), box[4 * k + 2] = pt(w), box[4 * k + 3] = pt(h);
        seen[k] = 1;
      }
    } else if (strncmp(line, "edge ", 5) == 0) {
      unsigned a, b;
      int np, used;
      ok = sscanf(line + 5, "i%u i%u %d%n", &a, &b, &np, &used) == 3 && a < d->n && b < d->n && np > 0 && np < 100000;
      char *q = line + 5 + used;
      vz_printf(&e, "%s[%u,%u,%d", first_edge ? "" : ",", a, b, strstr(q, " dashed") != NULL);
      first_edge = 0;
      for (int i = 0; ok && i < np; i++) {
        char *end;
        double x = strtod(q, &end);
        ok = end != q;
        q = end;
        double y = strtod(q, &end);
        ok = ok && end != q;
        q = end;
        vz_printf(&e, ",%d,%d", pt(x), pt(H - y));
      }
      vz_puts(&e, "]");
    } else if (strcmp(line, "stop") == 0) {
      done = 1;
    }
  }
  ok = ok && done && !e.bad;
  for (uint32_t i = 0; ok && i < d->n; i++) ok = seen[i];
  if (ok) {
    vz_printf(out, "{\"w\":%d,\"h\":%d,\"n\":[", pt(W), pt(H));
    for (uint32_t i = 0; i < d->n; i++) {
      const vz_item *it = &d->it[i];
      char cls[2] = {(char)it->cls, 0};
      vz_printf(out, "%s[%d,%d,%d,%d,%lld,\"%s\"", i ? "," : "", box[4 * i], box[4 * i + 1], box[4 * i + 2], box[4 * i + 3],
                (long long)it->id, cls);
      if (it->label) {
        vz_puts(out, ",");
        vz_json_str(out, it->label);
      }
      vz_puts(out, "]");
    }
    vz_puts(out, "],\"e\":[");
    vz_put(out, e.s, e.n);
    vz_puts(out, "]}");
  }
  free(box);
  free(seen);
  vz_buf_free(&e);
  return ok;
}

static char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  vz_buf b = {0};
  char tmp[65536];
  size_t got;
  while ((got = fread(tmp, 1, sizeof tmp, f)) > 0) vz_put(&b, tmp, got);
  int bad = ferror(f);
  fclose(f);
  vz_put(&b, "", 1);
  if (bad || b.bad) {
    vz_buf_free(&b);
    return NULL;
  }
  *n = b.n - 1;
  return b.s;
}

/* ---- running dot ---------------------------------------------------------------- */

#define MAXP 4

int vz_layout(const char *dot, vz_draw *const *d, size_t n, vz_labels *L, char **json, char *err, size_t errsz) {
  for (size_t i = 0; i < n; i++) json[i] = NULL;
  if (n == 0) return 1;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  size_t np = cores < 1 ? 1 : cores > MAXP ? MAXP : (size_t)cores;
  if (n < 16) np = 1;
  if (np > n) np = n;
  /* biggest pictures first, each to the least loaded process */
  size_t *byp = malloc(n * sizeof *byp), *order = malloc(n * sizeof *order);
  if (!byp || !order) {
    free(byp), free(order);
    snprintf(err, errsz, "out of memory");
    return 0;
  }
  double load[MAXP] = {0};
  for (size_t i = 0; i < n; i++) order[i] = i;
  /* a few huge pictures and many small ones: putting the pictures with more
     than 100 boxes first is enough */
  size_t nb = 0;
  for (size_t i = 0; i < n; i++)
    if (d[i]->n > 100) {
      size_t t = order[nb];
      order[nb] = order[i];
      order[i] = t;
      nb++;
    }
  for (size_t k = 0; k < n; k++) {
    size_t i = order[k], best = 0;
    for (size_t p = 1; p < np; p++)
      if (load[p] < load[best]) best = p;
    double m = d[i]->n + 1.0;
    load[best] += m > 100 ? m * m / 100 : m;
    byp[i] = best;
  }
  const char *tmp = getenv("TMPDIR");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/uopc-viz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    snprintf(err, errsz, "cannot make a temporary directory in %s: %s", tmp && *tmp ? tmp : "/tmp", strerror(errno));
    free(byp), free(order);
    return 0;
  }
  char in[MAXP][4200], out[MAXP][4200], errf[MAXP][4200];
  pid_t pid[MAXP];
  int ok = 1, started[MAXP] = {0};
  for (size_t p = 0; p < np; p++) {
    snprintf(in[p], sizeof in[p], "%s/in%zu.dot", dir, p);
    snprintf(out[p], sizeof out[p], "%s/out%zu.plain", dir, p);
    snprintf(errf[p], sizeof errf[p], "%s/err%zu.txt", dir, p);
  }
  for (size_t p = 0; ok && p < np; p++) {
    FILE *f = fopen(in[p], "w");
    if (!f) {
      snprintf(err, errsz, "cannot write %s: %s", in[p], strerror(errno));
      ok = 0;
      break;
    }
    for (size_t i = 0; ok && i < n; i++)
      if (byp[i] == p && !write_graph(f, d[i], L)) ok = 0, snprintf(err, errsz, "cannot write %s", in[p]);
    if (fclose(f) != 0 && ok) ok = 0, snprintf(err, errsz, "cannot write %s: %s", in[p], strerror(errno));
  }
  for (size_t p = 0; ok && p < np; p++) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    /* stdout, not -o: with -o, dot writes only the first graph there */
    posix_spawn_file_actions_addopen(&fa, 1, out[p], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, errf[p], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    char *argv[] = {(char *)"dot", (char *)"-Tplain", in[p], NULL};
    int rc = posix_spawn(&pid[p], dot, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) ok = 0, snprintf(err, errsz, "cannot run %s: %s", dot, strerror(rc));
    else started[p] = 1;
  }
  for (size_t p = 0; p < np; p++) {
    if (!started[p]) continue;
    int st;
    while (waitpid(pid[p], &st, 0) < 0 && errno == EINTR) {
    }
    if (ok && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
      size_t en = 0;
      char *msg = slurp(errf[p], &en);
      char *nl = msg ? strchr(msg, '\n') : NULL;
      if (nl) *nl = 0;
      snprintf(err, errsz, "dot failed%s%s", msg && *msg ? ": " : "", msg ? msg : "");
      free(msg);
      ok = 0;
    }
  }
  /* read back, in each process's order */
  for (size_t p = 0; ok && p < np; p++) {
    size_t len = 0;
    char *text = slurp(out[p], &len), *cur = text;
    if (!text) {
      snprintf(err, errsz, "cannot read dot's output %s", out[p]);
      ok = 0;
      break;
    }
    for (size_t i = 0; ok && i < n; i++) {
      if (byp[i] != p) continue;
      vz_buf b = {0};
      if (!read_graph(&cur, d[i], &b)) {
        snprintf(err, errsz, "cannot read dot's layout of picture %zu", i);
        ok = 0;
      }
      vz_put(&b, "", 1);
      if (ok && b.bad) ok = 0, snprintf(err, errsz, "out of memory");
      json[i] = ok ? b.s : (vz_buf_free(&b), NULL);
    }
    free(text);
  }
  for (size_t p = 0; p < np; p++) unlink(in[p]), unlink(out[p]), unlink(errf[p]);
  rmdir(dir);
  free(byp), free(order);
  if (!ok)
    for (size_t i = 0; i < n; i++) free(json[i]), json[i] = NULL;
  return ok;
}
