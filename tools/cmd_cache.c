/* tools/cmd_cache.c - the kernel cache (docs/cache.md):
 *
 *     uopc cache stats                       directory, entries, bytes, counters
 *     uopc cache clear                       remove every entry of the directory
 *     uopc cache warm [--tier=fast|strong] [--fast-math] [--hot] [--stream|--no-stream] FILE.uir
 *                                            compile the kernel FILE defines (so
 *                                            that later processes find it);
 *                                            prints how: miss, disk hit, memory hit
 */
#include <string.h>

#include "cli.h"

static void put_counters(cli *k) {
  uopc_cache_stats s;
  uopc_cache_get_stats(&s);
  out_fmt(k, "this process: %llu memory hits, %llu disk hits, %llu misses, %llu written, %llu damaged, %llu evicted\n",
          (unsigned long long)s.mem_hits, (unsigned long long)s.disk_hits, (unsigned long long)s.misses,
          (unsigned long long)s.disk_writes, (unsigned long long)s.disk_damaged, (unsigned long long)s.disk_evicted);
}

static int stats(cli *k) {
  char dir[4096];
  if (!uopc_cache_dir(dir, sizeof dir)) {
    out_str(k, "directory: none (disk cache off)\n");
  } else {
    uint64_t n, bytes;
    uopc_error e;
    if (uopc_cache_disk_usage(&n, &bytes, &e) != UOPC_OK) return report(&e, "uopc cache");
    out_fmt(k, "directory: %s\nentries: %llu\nbytes: %llu\n", dir, (unsigned long long)n, (unsigned long long)bytes);
  }
  put_counters(k);
  return EXIT_OK;
}

static int clear(cli *k) {
  uint64_t n = 0;
  uopc_error e;
  char dir[4096];
  if (!uopc_cache_dir(dir, sizeof dir)) {
    out_str(k, "disk cache off: nothing to clear\n");
    return EXIT_OK;
  }
  if (uopc_cache_clear_disk(&n, &e) != UOPC_OK) return report(&e, "uopc cache");
  out_fmt(k, "removed %llu entries from %s\n", (unsigned long long)n, dir);
  return EXIT_OK;
}

static int warm(cli *k, int argc, char **argv) {
  uopc_compile_opts o = {UOPC_TIER_FAST};
  const char *file = NULL;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--tier=fast") == 0) o.tier = UOPC_TIER_FAST;
    else if (strcmp(argv[i], "--tier=strong") == 0) o.tier = UOPC_TIER_STRONG;
    else if (parse_compile_flag(argv[i], &o.flags)) continue; /* --fast-math, --hot, --stream, --no-stream */
    else if (argv[i][0] == '-' && argv[i][1]) return verb_usage("cache warm", "unknown option '%s'", argv[i]);
    else if (file) return verb_usage("cache warm", "takes one FILE.uir");
    else file = argv[i];
  }
  if (!file) return verb_usage("cache warm", "takes one FILE.uir");
  uopc_node *root = load(k, file);
  if (!root) return EXIT_ERR;
  uopc_cache_stats a, b;
  uopc_cache_get_stats(&a);
  uopc_error e;
  uopc_kernel *kern = uopc_compile(k->c, root, &o, &e); /* its error is in e only (uopc.h) */
  if (!kern) return e.file = NULL, report(&e, file);
  uopc_cache_get_stats(&b);
  uopc_kernel_free(kern);
  out_str(k, b.disk_hits > a.disk_hits ? "disk hit\n" : b.mem_hits > a.mem_hits ? "memory hit\n" : "miss\n");
  return EXIT_OK;
}

int cmd_cache(cli *k, int argc, char **argv) {
  if (argc < 1) return verb_usage("cache", "takes a subcommand: stats, clear or warm FILE.uir");
  if (strcmp(argv[0], "stats") == 0 || strcmp(argv[0], "clear") == 0) {
    if (argc != 1) return verb_usage("cache", "%s takes no arguments", argv[0]);
    return argv[0][0] == 's' ? stats(k) : clear(k);
  }
  if (strcmp(argv[0], "warm") == 0) return warm(k, argc - 1, argv + 1);
  return verb_usage("cache", "unknown subcommand '%s' (stats, clear or warm FILE.uir)", argv[0]);
}
