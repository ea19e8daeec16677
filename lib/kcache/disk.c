/* lib/kcache/disk.c - the kernel cache on disk (docs/cache.md).
 *
 * One file per key, DIR/<32 hex digits of the key hash>.ukc:
 *
 *   offset size  field (little endian)
 *    0      8    magic "UOPCKRN\0"
 *    8      4    format version (UOPI_KCACHE_FORMAT)
 *   12      4    header size H (all of the header, its CRC included)
 *   16     16    key hash
 *   32      4    tier (bits 0-7) and the compile flags (bits 8-31:
 *                UOPC_COMPILE_* << 8; 0 is the strict mode)
 *   36      4    nbufs (<= UOPI_KERNEL_MAX_BUFS)
 *   40      8    object size
 *   48      8    payload size = file size - H (= the object size)
 *   56      4    CRC-32 of the payload
 *   60      2+2+2+2  lengths: codegen id, target id, pipeline, kernel name
 *   68      4    length of the graph bytes
 *   72      ...  codegen id, target id, pipeline, name, graph bytes,
 *                dtype[nbufs] (1 byte each), len[nbufs] (8 bytes each)
 *   H-4     4    CRC-32 of bytes [0, H-4)
 *   H       ...  the object (ELF bytes as the code generator wrote them)
 *
 * The file is untrusted input: every length is checked against the file
 * size before use, both CRCs and the object size are checked, then the
 * whole key is compared with the wanted one.  Any failure removes the file
 * and is a miss.  The object is stored as it is (format 3): zlib saved ~300
 * bytes an entry and cost ~1-1.5 us of inflate on every disk hit
 * (docs/cache.md).  Writers write a temporary file in the same directory and
 * rename it over the entry, so a reader sees a whole old file, a whole new
 * one, or none.  No fsync: after a crash a torn entry fails its checks and
 * is recompiled, and a compile should not wait for the disk.
 *
 * DIR/.budget holds the directory's size estimate, shared by the processes
 * that write to it ("the size bound" below).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "kcache/kcache.h"
#include "support/support.h"
#include "uopc/cache.h"

#define FIXED 72                        /* bytes before the variable fields */
#define MAX_OBJ (64u << 20)             /* largest object accepted */
#define MAX_FILE (MAX_OBJ + (1u << 20)) /* largest entry read */
#define DEFAULT_MAX_MB 256.0
#define TMP_PREFIX ".tmp-"
#define STALE_TMP_SECONDS 600           /* leftover temp files older than this go */
#define TOUCH_SECONDS 2                 /* a hit refreshes an mtime older than this */

/* ---- little-endian fields --------------------------------------------------- */

static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }
static void wr16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static void wr32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void wr64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t crc(const uint8_t *p, size_t n) {
  uLong c = crc32(0L, Z_NULL, 0);
  while (n) { /* zlib takes uInt lengths */
    uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;
    c = crc32(c, p, k);
    p += k, n -= k;
  }
  return (uint32_t)c;
}

/* ---- encode / decode ---------------------------------------------------------- */

static int name_ok(const char *s, size_t n) {
  if (n == 0 || n >= UOPI_KCACHE_NAME_MAX) return 0;
  for (size_t i = 0; i < n; i++) {
    char ch = s[i];
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_')) return 0;
  }
  return !(s[0] >= '0' && s[0] <= '9');
}

uint8_t *uopi_kfile_encode(const uopi_kkey *key, const uopi_kmeta *m, const void *obj, size_t obj_size, size_t *n) {
  *n = 0;
  size_t lc = strlen(key->env.codegen), lt = strlen(key->env.target), lp = strlen(key->env.pipeline);
  size_t ln = strlen(m->name);
  if (lc > 0xffff || lt > 0xffff || lp > 0xffff || !name_ok(m->name, ln) || m->nbufs > UOPI_KERNEL_MAX_BUFS ||
      obj_size > MAX_OBJ || key->graph_len > 0xffffffffu)
    return NULL;
  size_t h = FIXED + lc + lt + lp + ln + key->graph_len + (size_t)m->nbufs * 9 + 4;
  uint8_t *p = malloc(h + obj_size);
  if (!p) return NULL;
  memcpy(p + h, obj, obj_size);
  memcpy(p, UOPI_KCACHE_MAGIC, 8);
  wr32(p + 8, key->env.format);
  wr32(p + 12, (uint32_t)h);
  memcpy(p + 16, key->hash, UOPI_KCACHE_HASH);
  wr32(p + 32, key->env.tier | key->env.flags << 8);
  wr32(p + 36, m->nbufs);
  wr64(p + 40, obj_size);
  wr64(p + 48, obj_size);
  wr32(p + 56, crc(p + h, obj_size));
  wr16(p + 60, (uint16_t)lc);
  wr16(p + 62, (uint16_t)lt);
  wr16(p + 64, (uint16_t)lp);
  wr16(p + 66, (uint16_t)ln);
  wr32(p + 68, (uint32_t)key->graph_len);
  uint8_t *q = p + FIXED;
  memcpy(q, key->env.codegen, lc), q += lc;
  memcpy(q, key->env.target, lt), q += lt;
  memcpy(q, key->env.pipeline, lp), q += lp;
  memcpy(q, m->name, ln), q += ln;
  memcpy(q, key->graph, key->graph_len), q += key->graph_len;
  for (uint32_t i = 0; i < m->nbufs; i++) *q++ = m->dtype[i];
  for (uint32_t i = 0; i < m->nbufs; i++) wr64(q, (uint64_t)m->len[i]), q += 8;
  wr32(q, crc(p, h - 4));
  *n = h + obj_size;
  return p;
}

const char *uopi_kfile_decode(const uint8_t *p, size_t n, uopi_kfile *f) {
  memset(f, 0, sizeof *f);
  if (n < FIXED + 4) return "truncated (shorter than a header)";
  if (memcmp(p, UOPI_KCACHE_MAGIC, 8) != 0) return "not a uopc kernel entry (bad magic)";
  f->format = rd32(p + 8);
  if (f->format != UOPI_KCACHE_FORMAT) return "another format version";
  uint32_t h = rd32(p + 12), nb = rd32(p + 36);
  size_t lc = rd16(p + 60), lt = rd16(p + 62), lp = rd16(p + 64), ln = rd16(p + 66), lg = rd32(p + 68);
  if (nb > UOPI_KERNEL_MAX_BUFS) return "bad header (buffer count)";
  /* size_t arithmetic: every term is < 2^32, so the sum cannot wrap */
  if ((size_t)h != FIXED + lc + lt + lp + ln + lg + (size_t)nb * 9 + 4) return "bad header (lengths)";
  if (h > n) return "truncated (inside the header)";
  if (crc(p, h - 4) != rd32(p + h - 4)) return "header CRC-32 mismatch";
  f->header_size = h;
  f->tier = rd32(p + 32) & 0xff;
  f->flags = rd32(p + 32) >> 8;
  memcpy(f->hash, p + 16, UOPI_KCACHE_HASH);
  f->meta.nbufs = nb;
  f->obj_size = rd64(p + 40);
  uint64_t ps = rd64(p + 48);
  const uint8_t *q = p + FIXED;
  f->codegen = (const char *)q, f->codegen_len = lc, q += lc;
  f->target = (const char *)q, f->target_len = lt, q += lt;
  f->pipeline = (const char *)q, f->pipeline_len = lp, q += lp;
  if (!name_ok((const char *)q, ln)) return "bad header (kernel name)";
  memcpy(f->meta.name, q, ln), q += ln;
  f->graph = q, f->graph_len = lg, q += lg;
  for (uint32_t i = 0; i < nb; i++) f->meta.dtype[i] = *q++;
  for (uint32_t i = 0; i < nb; i++) f->meta.len[i] = (int64_t)rd64(q), q += 8;
  if (ps > n - h) return "truncated (inside the object)";
  if (ps < n - h) return "trailing bytes after the object";
  f->payload_size = (size_t)ps;
  if (f->obj_size == 0 || f->obj_size > MAX_OBJ || f->obj_size != ps) return "bad header (object size)";
  if (crc(p + h, f->payload_size) != rd32(p + 56)) return "object CRC-32 mismatch";
  f->obj = p + h;
  return NULL;
}

static int same_str(const char *a, size_t n, const char *b) { return strlen(b) == n && memcmp(a, b, n) == 0; }

const char *uopi_kfile_match(const uopi_kfile *f, const uopi_kkey *key, const uopi_kmeta *want) {
  const uopi_kenv *env = &key->env;
  if (f->format != env->format) return "another format version";
  if (!same_str(f->target, f->target_len, env->target)) return "built for another target (LLVM version, CPU or features)";
  if (!same_str(f->codegen, f->codegen_len, env->codegen)) return "built by another uopc code generator";
  if (f->flags != env->flags) return "built with other compile flags (fast math)";
  if (f->tier != env->tier || !same_str(f->pipeline, f->pipeline_len, env->pipeline)) return "built for another tier";
  if (memcmp(f->hash, key->hash, UOPI_KCACHE_HASH) != 0) return "the entry's key hash is not its file name";
  if (f->graph_len != key->graph_len || memcmp(f->graph, key->graph, key->graph_len) != 0)
    return "another kernel (key hash collision)";
  if (f->meta.nbufs != want->nbufs) return "another buffer count";
  for (uint32_t i = 0; i < want->nbufs; i++)
    if (f->meta.dtype[i] != want->dtype[i] || f->meta.len[i] != want->len[i]) return "other buffer dtypes or lengths";
  return NULL;
}

/* ---- the directory ------------------------------------------------------------ */

static pthread_mutex_t disk_lock = PTHREAD_MUTEX_INITIALIZER;
static int disk_off;              /* uopc_cache_set_disk(0) */
static char bad_dir[PATH_MAX];    /* the last directory found unusable */

static unsigned unshared_stores;  /* stores without a usable budget file ("the size bound") */

void uopc_cache_set_disk(int on) {
  pthread_mutex_lock(&disk_lock);
  disk_off = !on;
  pthread_mutex_unlock(&disk_lock);
}

static int env_off(void) { return uopi_env_onoff("UOPC_CACHE") == 0; }

int uopi_kdisk_dir(char *buf, size_t n) {
  if (n) buf[0] = 0;
  pthread_mutex_lock(&disk_lock);
  int off = disk_off;
  pthread_mutex_unlock(&disk_lock);
  if (off || env_off()) return 0;
  const char *d = getenv("UOPC_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  int w;
  if (d && *d) w = snprintf(buf, n, "%s", d);
  else if (x && *x == '/') w = snprintf(buf, n, "%s/uopc", x); /* XDG: relative paths are invalid */
  else if (home && *home) w = snprintf(buf, n, "%s/.cache/uopc", home);
  else return 0;
  if (w < 0 || (size_t)w >= n) {
    if (n) buf[0] = 0;
    return 0;
  }
  size_t len = (size_t)w; /* no trailing slashes (but keep "/") */
  while (len > 1 && buf[len - 1] == '/') buf[--len] = 0;
  return 1;
}

int uopc_cache_dir(char *buf, size_t n) {
  if (!buf) n = 0; /* NULL buf: 0, as for a buffer too small */
  return uopi_kdisk_dir(buf, n);
}

void uopi_kdisk_path(const char *dir, const uint8_t hash[UOPI_KCACHE_HASH], char *buf, size_t n) {
  char hex[2 * UOPI_KCACHE_HASH + 1];
  uopi_kcache_hex(hash, hex);
  snprintf(buf, n, "%s/%s" UOPI_KCACHE_SUFFIX, dir, hex);
}

/* mkdir -p (mode 0700 for what it creates); 0 with errno on failure. */
static int make_dirs(const char *dir) {
  char p[PATH_MAX];
  size_t n = strlen(dir);
  if (n == 0 || n >= sizeof p) return errno = ENAMETOOLONG, 0;
  memcpy(p, dir, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (p[i] != '/' && p[i] != 0) continue;
    char ch = p[i];
    p[i] = 0;
    if (mkdir(p, 0700) != 0 && errno != EEXIST) return 0;
    p[i] = ch;
  }
  struct stat st;
  if (stat(dir, &st) != 0) return 0;
  if (!S_ISDIR(st.st_mode)) return errno = ENOTDIR, 0;
  return 1;
}

/* Forgets that dir was unusable / says whether it was. */
static int is_bad(const char *dir) {
  pthread_mutex_lock(&disk_lock);
  int bad = strcmp(bad_dir, dir) == 0;
  pthread_mutex_unlock(&disk_lock);
  return bad;
}

static void mark_bad(const char *dir, const char *what, int err) {
  pthread_mutex_lock(&disk_lock);
  int first = strcmp(bad_dir, dir) != 0;
  snprintf(bad_dir, sizeof bad_dir, "%s", dir);
  pthread_mutex_unlock(&disk_lock);
  if (first) uopi_kcache_debug("warning: cache directory %s is unusable (%s: %s); no disk cache", dir, what, strerror(err));
}

static int is_entry_name(const char *s) {
  size_t n = strlen(s);
  if (n != 2 * UOPI_KCACHE_HASH + strlen(UOPI_KCACHE_SUFFIX)) return 0;
  if (strcmp(s + 2 * UOPI_KCACHE_HASH, UOPI_KCACHE_SUFFIX) != 0) return 0;
  for (int i = 0; i < 2 * UOPI_KCACHE_HASH; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
  return 1;
}

static int is_tmp_name(const char *s) { return strncmp(s, TMP_PREFIX, strlen(TMP_PREFIX)) == 0; }

/* ---- loading ------------------------------------------------------------------ */

/* Reads the rest of fd (a regular file of size hint) into p (malloc'd,
   holding the first got bytes, FIRST_READ of them), grown to hint; the
   buffer, or NULL (p freed) when too large or out of memory. */
static uint8_t *read_rest(int fd, uint8_t *p, size_t got, size_t hint, size_t *n) {
  *n = 0;
  if (hint > MAX_FILE) {
    free(p);
    return NULL;
  }
  if (hint > got) {
    uint8_t *q = realloc(p, hint);
    if (!q) {
      free(p);
      return NULL;
    }
    p = q;
  }
  while (got < hint) {
    ssize_t r = read(fd, p + got, hint - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break; /* shorter than fstat said: decode reports it truncated */
    got += (size_t)r;
  }
  *n = got;
  return p;
}

/* Removes a damaged entry (unless it was replaced since it was opened). */
static void damaged(const char *path, const struct stat *opened, const char *why) {
  struct stat now;
  if (stat(path, &now) == 0 && now.st_dev == opened->st_dev && now.st_ino == opened->st_ino) unlink(path);
  uopi_kstat_add(UOPI_KSTAT_DISK_DAMAGED, 1);
  uopi_kcache_debug("warning: removed damaged entry %s: %s; compiling afresh", path, why);
}

/* A hit costs open, read and close when it can: on this kind of VM every
   system call is 1.3-1.8 us of a 15 us hit.  The entry is read in one call
   of FIRST_READ bytes (every entry measured is under 33 KB; a longer one
   takes an fstat and a second read).  The fstat that decides whether to
   refresh the entry's mtime (the LRU clock, refreshed when older than
   TOUCH_SECONDS) is skipped while this process knows the mtime is fresh:
   `fresh` remembers, per entry path (direct-mapped by a hash of it), the
   second until which the mtime this process saw or set stays fresh.  A slot
   is one relaxed atomic (a lost update costs one fstat); only hits fill it,
   so a store, or an mtime set back by hand, is seen at the next hit that
   finds no fresh slot (within TOUCH_SECONDS). */
#define FIRST_READ 65536
#define FRESH_SLOTS 256
static _Atomic uint64_t fresh[FRESH_SLOTS]; /* path hash (32 bits) << 32 | fresh until (seconds) */

static int known_fresh(uint32_t ph, time_t now) {
  uint64_t v = atomic_load_explicit(&fresh[ph % FRESH_SLOTS], memory_order_relaxed);
  int64_t left = (int64_t)(uint32_t)v - (int64_t)(uint32_t)now;
  return (uint32_t)(v >> 32) == ph && left > 0 && left <= TOUCH_SECONDS;
}

static void set_fresh(uint32_t ph, time_t until) {
  atomic_store_explicit(&fresh[ph % FRESH_SLOTS], (uint64_t)ph << 32 | (uint32_t)until, memory_order_relaxed);
}

int uopi_kdisk_load(const uopi_kkey *key, const uopi_kmeta *want, uopi_jit_code **out, char *name, size_t name_size) {
  *out = NULL;
  char dir[PATH_MAX], path[PATH_MAX + 64];
  if (!uopi_kdisk_dir(dir, sizeof dir)) return 0;
  uopi_kdisk_path(dir, key->hash, path, sizeof path);
  /* O_NONBLOCK: a FIFO in the directory must not block the open */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return 0;
  struct stat st;
  int have_st = 0, hit = 0;
  static const char oom[] = "out of memory";
  const char *why = NULL;
  size_t n = 0;
  uint8_t *bytes = malloc(FIRST_READ);
  if (!bytes) {
    close(fd);
    return 0;
  }
  ssize_t r;
  do r = read(fd, bytes, FIRST_READ);
  while (r < 0 && errno == EINTR);
  if (r < 0 || r == FIRST_READ) {
    /* a directory (EISDIR), something else than a file, or a long entry */
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || r < 0) {
      free(bytes);
      close(fd);
      return 0;
    }
    have_st = 1;
    bytes = read_rest(fd, bytes, (size_t)r, (size_t)st.st_size, &n);
    if (!bytes) why = st.st_size > MAX_FILE ? "too large" : oom;
  } else {
    n = (size_t)r;
  }
  uopi_kfile f = {0};
  if (!why) why = uopi_kfile_decode(bytes, n, &f);
  if (!why) why = uopi_kfile_match(&f, key, want);
  if (!why) {
    uopc_error e = {0};
    uopc_status s = uopi_jit_load(f.obj, f.obj_size, f.meta.name, want->nbufs + 1, out, &e);
    if (s == UOPC_OK) {
      hit = 1;
      uopi_kstat_add(UOPI_KSTAT_DISK_HIT, 1);
      struct timespec now;
      clock_gettime(CLOCK_REALTIME, &now);
      uint32_t ph = uopi_fnv1a(path, strlen(path));
      if (!known_fresh(ph, now.tv_sec) && (have_st || fstat(fd, &st) == 0)) {
        time_t until = st.st_mtim.tv_sec + TOUCH_SECONDS;
        if (now.tv_sec - st.st_mtim.tv_sec >= TOUCH_SECONDS) {
          futimens(fd, NULL); /* the LRU clock is the mtime */
          until = now.tv_sec + TOUCH_SECONDS;
        }
        set_fresh(ph, until);
      }
      snprintf(name, name_size, "%s", f.meta.name);
      uopi_kcache_debug("disk hit %s", path);
    } else if (s == UOPC_ERR_NOMEM) {
      why = oom; /* not the entry's fault */
    } else {
      static _Thread_local char msg[320];
      snprintf(msg, sizeof msg, "cannot link the object (%s)", e.msg);
      why = msg;
    }
  }
  /* not the entry's fault: memory; not an entry: a FIFO (read 0 bytes) */
  if (why && why != oom && strcmp(why, "out of memory") != 0 && (have_st || fstat(fd, &st) == 0) &&
      S_ISREG(st.st_mode))
    damaged(path, &st, why);
  free(bytes);
  close(fd);
  return hit;
}

/* ---- the size bound ------------------------------------------------------------ */

static uint64_t max_bytes(void) {
  const char *v = getenv("UOPC_CACHE_MAX_MB");
  double mb = DEFAULT_MAX_MB;
  if (v && *v) {
    char *end;
    double d = strtod(v, &end);
    if (end != v && *end == 0 && d >= 0 && d < 1e9) mb = d;
  }
  return (uint64_t)(mb * 1048576.0);
}

typedef struct dent {
  char name[2 * UOPI_KCACHE_HASH + 8];
  uint64_t size;
  struct timespec mtime;
} dent;

static int older(const void *a, const void *b) {
  const dent *x = a, *y = b;
  if (x->mtime.tv_sec != y->mtime.tv_sec) return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
  if (x->mtime.tv_nsec != y->mtime.tv_nsec) return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* Lists dir's entries (*n of them, malloc'd), removing stale temp files;
   NULL with *n = 0 on failure (errno) or when empty. */
static dent *scan(const char *dir, size_t *n, uint64_t *total, int *err) {
  *n = 0, *total = 0, *err = 0;
  DIR *d = opendir(dir);
  if (!d) {
    *err = errno;
    return NULL;
  }
  dent *v = NULL;
  size_t cap = 0;
  time_t now = time(NULL);
  struct dirent *de;
  while ((de = readdir(d))) {
    struct stat st;
    int entry = is_entry_name(de->d_name);
    if (!entry && !is_tmp_name(de->d_name)) continue;
    if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    if (!entry) {
      if (now - st.st_mtim.tv_sec > STALE_TMP_SECONDS) unlinkat(dirfd(d), de->d_name, 0);
      continue;
    }
    if (*n == cap) {
      size_t nc = cap ? cap * 2 : 64;
      dent *nv = realloc(v, nc * sizeof *nv);
      if (!nv) break;
      v = nv, cap = nc;
    }
    dent *e = &v[(*n)++];
    memcpy(e->name, de->d_name, strlen(de->d_name) + 1); /* an entry name: 36 chars */
    e->size = (uint64_t)st.st_size;
    e->mtime = st.st_mtim;
    *total += e->size;
  }
  closedir(d);
  return v;
}

/* Removes least recently used entries of v (n entries, total bytes, from
   scan) until dir holds at most target bytes; returns what it holds after. */
static uint64_t evict_lru(const char *dir, dent *v, size_t n, uint64_t total, uint64_t target) {
  qsort(v, n, sizeof *v, older);
  for (size_t i = 0; i < n && total > target; i++) {
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, v[i].name);
    if (unlink(path) == 0) {
      total -= v[i].size;
      uopi_kstat_add(UOPI_KSTAT_DISK_EVICTED, 1);
      uopi_kcache_debug("evicted %s (least recently used; UOPC_CACHE_MAX_MB)", path);
    } else if (errno == ENOENT) {
      total -= v[i].size; /* another process took it */
    }
  }
  return total;
}

/* The directory's size, shared by every process writing to it, is kept in
   DIR/.budget: 8-byte little-endian records, a scan record (BUDGET_SCAN set:
   the bytes the directory held after the last scan) then one record per entry
   written since (its bytes), each appended with O_APPEND (atomic on a local
   file system).  A store appends its record and reads the file back; the
   estimate is the last scan record plus the records after it.  It scans the
   directory only when the estimate passes the bound (then evicts down to 90%
   of it, so that a full cache is not scanned on every store), when
   BUDGET_RESCAN entries were written since the last scan, or when the file
   holds no scan record (a directory written by an older uopc, cleared, or a
   damaged file); the scan rewrites the file as one scan record.  A scan costs
   a stat per entry (0.3 s for 65,000 entries): with one estimate per process,
   as before, every process paid it on its first store.
   Estimates drift only a little: a record appended between a scan's truncation
   and its scan record is lost (an entry under-counted until the next scan);
   an entry written twice by racing processes, or removed by hand, is counted
   (an early scan).  A scan holds flock on the file: a store that finds it
   held leaves the scan to its holder.  Without a usable budget file the
   process scans on its first store and every BUDGET_UNSHARED stores. */
#define BUDGET_FILE ".budget"
#define BUDGET_SCAN (UINT64_C(1) << 63)
#define BUDGET_RESCAN 1024
#define BUDGET_UNSHARED 64
#define BUDGET_MAX_RECORDS (BUDGET_RESCAN + 64) /* longer: damaged, rescan */

static void budget_path(const char *dir, char *buf, size_t n) { snprintf(buf, n, "%s/" BUDGET_FILE, dir); }

/* The estimate in fd (*bytes, and *since: entries written since the scan);
   0 when the file holds no scan record or cannot be read. */
static int budget_read(int fd, uint64_t *bytes, uint64_t *since) {
  struct stat st;
  *bytes = *since = 0;
  if (fstat(fd, &st) != 0 || st.st_size <= 0 || st.st_size % 8 != 0 || st.st_size > 8 * BUDGET_MAX_RECORDS) return 0;
  size_t n = (size_t)st.st_size;
  uint8_t *buf = malloc(n);
  if (!buf || pread(fd, buf, n, 0) != (ssize_t)n) {
    free(buf);
    return 0;
  }
  int have = 0;
  for (size_t i = 0; i < n; i += 8) {
    uint64_t r = rd64(buf + i);
    if (r & BUDGET_SCAN) {
      have = 1, *bytes = r & ~BUDGET_SCAN, *since = 0;
    } else {
      *bytes = r > UINT64_MAX - *bytes ? UINT64_MAX : *bytes + r;
      ++*since;
    }
  }
  free(buf);
  return have;
}

/* Scans dir, evicts down to 90% of max when it holds more, and (fd >= 0)
   rewrites the budget file as the scan record. */
static void scan_dir(const char *dir, uint64_t max, int fd) {
  size_t n;
  uint64_t total;
  int err;
  dent *v = scan(dir, &n, &total, &err);
  if (!err) uopi_kcache_debug("scanned %s: %zu entries, %llu bytes", dir, n, (unsigned long long)total);
  if (!err && total > max) total = evict_lru(dir, v, n, total, max - max / 10);
  free(v);
  if (err || fd < 0) return;
  uint8_t r[8];
  wr64(r, total | BUDGET_SCAN);
  int ok = ftruncate(fd, 0) == 0 && write(fd, r, sizeof r) == (ssize_t)sizeof r;
  (void)ok; /* on failure the next store finds no scan record and scans again */
}

/* After writing `added` bytes to dir: accounts for them, and scans when the
   estimate says so (above). */
static void budget(const char *dir, uint64_t added, uint64_t max) {
  char path[PATH_MAX + 64];
  budget_path(dir, path, sizeof path);
  int fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
  int go;
  if (fd >= 0) {
    uint8_t r[8];
    uint64_t bytes, since;
    wr64(r, added & ~BUDGET_SCAN);
    go = write(fd, r, sizeof r) != (ssize_t)sizeof r || !budget_read(fd, &bytes, &since) || bytes > max ||
         since >= BUDGET_RESCAN;
  } else {
    pthread_mutex_lock(&disk_lock);
    go = unshared_stores++ % BUDGET_UNSHARED == 0;
    pthread_mutex_unlock(&disk_lock);
  }
  /* one scan at a time (threads and processes): the others go on */
  if (go && (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) == 0)) scan_dir(dir, max, fd);
  if (fd >= 0) close(fd); /* and the lock */
}

/* ---- storing ------------------------------------------------------------------- */

static int write_all(int fd, const uint8_t *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return 0;
    p += w, n -= (size_t)w;
  }
  return 1;
}

void uopi_kdisk_store(const uopi_kkey *key, const uopi_kmeta *m, const uopi_jit_code *code) {
  char dir[PATH_MAX], path[PATH_MAX + 64], tmp[PATH_MAX + 64];
  if (!uopi_kdisk_dir(dir, sizeof dir)) return;
  uint64_t max = max_bytes();
  if (max == 0 || is_bad(dir)) return;
  if (!make_dirs(dir)) {
    mark_bad(dir, "mkdir", errno);
    return;
  }
  size_t n;
  uint8_t *bytes = uopi_kfile_encode(key, m, code->obj, code->obj_size, &n);
  if (!bytes) return;
  char hex[2 * UOPI_KCACHE_HASH + 1];
  uopi_kcache_hex(key->hash, hex);
  uopi_kdisk_path(dir, key->hash, path, sizeof path);
  snprintf(tmp, sizeof tmp, "%s/" TMP_PREFIX "%s-XXXXXX", dir, hex);
  int fd = mkostemp(tmp, O_CLOEXEC);
  if (fd < 0) {
    mark_bad(dir, "create", errno);
    free(bytes);
    return;
  }
  int ok = write_all(fd, bytes, n);
  int err = errno;
  ok = close(fd) == 0 && ok;
  if (ok && rename(tmp, path) != 0) ok = 0, err = errno;
  free(bytes);
  if (!ok) {
    unlink(tmp);
    uopi_kcache_debug("warning: cannot write %s (%s)", path, strerror(err));
    return;
  }
  uopi_kstat_add(UOPI_KSTAT_DISK_WRITE, 1);
  uopi_kcache_debug("wrote %s (%zu bytes, object %zu)", path, n, code->obj_size);
  budget(dir, n, max);
}

/* ---- the public API --------------------------------------------------------------- */

static uopc_status io_fail(uopc_error *e, uopc_status code, const char *fmt, const char *a, const char *b) {
  if (e) {
    memset(e, 0, sizeof *e);
    e->code = code;
    if (snprintf(e->msg, sizeof e->msg, fmt, a, b) < 0) e->msg[0] = 0; /* long paths are cut */
  }
  return code;
}

uopc_status uopc_cache_disk_usage(uint64_t *entries, uint64_t *bytes, uopc_error *e) {
  uint64_t ne, nb;
  if (!entries) entries = &ne; /* either may be NULL */
  if (!bytes) bytes = &nb;
  *entries = *bytes = 0;
  char dir[PATH_MAX];
  if (!uopi_kdisk_dir(dir, sizeof dir)) return io_fail(e, UOPC_ERR_ARG, "the disk cache is off%s%s", "", "");
  size_t n;
  int err;
  free(scan(dir, &n, bytes, &err));
  if (err && err != ENOENT) return io_fail(e, UOPC_ERR_IO, "cannot read the cache directory %s: %s", dir, strerror(err));
  *entries = n;
  return UOPC_OK;
}

uopc_status uopc_cache_clear_disk(uint64_t *removed, uopc_error *e) {
  if (removed) *removed = 0;
  char dir[PATH_MAX];
  if (!uopi_kdisk_dir(dir, sizeof dir)) return io_fail(e, UOPC_ERR_ARG, "the disk cache is off%s%s", "", "");
  DIR *d = opendir(dir);
  if (!d) {
    if (errno == ENOENT) return UOPC_OK;
    return io_fail(e, UOPC_ERR_IO, "cannot read the cache directory %s: %s", dir, strerror(errno));
  }
  uopc_status st = UOPC_OK;
  struct dirent *de;
  while ((de = readdir(d))) {
    int entry = is_entry_name(de->d_name);
    if (!entry && !is_tmp_name(de->d_name)) continue;
    if (unlinkat(dirfd(d), de->d_name, 0) == 0) {
      if (entry && removed) ++*removed;
    } else if (errno != ENOENT && st == UOPC_OK) {
      char path[PATH_MAX + 300];
      snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
      st = io_fail(e, UOPC_ERR_IO, "cannot remove %s: %s", path, strerror(errno));
    }
  }
  closedir(d);
  char path[PATH_MAX + 64];
  budget_path(dir, path, sizeof path);
  unlink(path); /* the next store scans (an empty directory) and starts a new one */
  pthread_mutex_lock(&disk_lock);
  if (strcmp(bad_dir, dir) == 0) bad_dir[0] = 0;
  pthread_mutex_unlock(&disk_lock);
  return st;
}
