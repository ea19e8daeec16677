/* lib/jit/engine.c - the process's JIT engine: a linker, pooled
 * TargetMachines, one mutex.
 *
 * Two levels of setup:
 *   - once per process (pthread_once, never undone): the native target and
 *     LLVM's command-line options.  cl::opts are process-global (what a host
 *     sees: include/uopc/jit.h); LLVM 19 accepts an option again in a later
 *     parse (the last wins) and through the C API a parse error returns
 *     instead of exiting, but the options are still parsed exactly once.
 *   - the engine (under init_lock, undone by uopi_jit_shutdown): the linker
 *     (link.h: JITLink into the memory pool), the host triple and the data
 *     layout of the host TargetMachine, the CPU strings (the host's, or
 *     UOPC_JIT_CPU / UOPC_JIT_FEATURES: target_cpu below), the target id.
 * Code generation happens on pooled TargetMachines (tm.c).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>

#include "jit/jit_impl.h"
#include "jit/link.h"
#include "support/support.h"

/* The one cl::opt: CodeGen None (TIER0) keeps FastISel but allocates
   registers with the greedy allocator instead of the fast one, so vector
   loop bodies stop spilling, for a fraction of a millisecond (docs/jit.md). */
#define CL_OPT "-optimize-regalloc"
static const char *const cl_args[] = {"uopc", CL_OPT};

static pthread_once_t process_once = PTHREAD_ONCE_INIT;
static int process_failed;

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int ready;
static atomic_uint generation; /* successful inits so far (uopi_jit_generation) */
static uopi_jit_engine engine = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void process_init(void) {
  if (LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter()) {
    process_failed = 1;
    return;
  }
  LLVMParseCommandLineOptions((int)(sizeof cl_args / sizeof *cl_args), cl_args, "");
}

static char *make_target_id(const uopi_jit_engine *g) {
  unsigned major, minor, patch;
  LLVMGetVersion(&major, &minor, &patch);
  size_t n = strlen(g->triple) + strlen(g->cpu) + strlen(g->features) + 64;
  char *s = malloc(n);
  if (s)
    snprintf(s, n, "llvm %u.%u.%u; %s; %s; %s; cl: " CL_OPT, major, minor, patch, g->triple, g->cpu,
             g->features);
  return s;
}

/* The CPU and features every TargetMachine targets.  By default the host's
   (LLVMGetHostCPUName/Features).  UOPC_JIT_CPU=NAME (an LLVM CPU name, e.g.
   x86-64-v3 or haswell) targets that CPU instead, with its own features
   unless UOPC_JIT_FEATURES=+a,-b,... gives them (which also applies to the
   host CPU when UOPC_JIT_CPU is unset).  For running under valgrind, which
   decodes no AVX-512 (scripts/valgrind.sh sets UOPC_JIT_CPU=x86-64-v3), and
   for reproducing another machine's code.  A malformed value is ignored
   (uopi_env_token; the CLI warns); a well-formed name LLVM does not know
   gets LLVM's own warning on stderr and its generic CPU.  Both strings are
   in the target id, so cache entries of one CPU are never loaded for
   another (docs/decisions.md, "JIT CPU override"). */
static int has_feature(const char *features, const char *f) {
  size_t n = strlen(f);
  for (const char *p = features; (p = strstr(p, f)) != NULL; p += n)
    if ((p == features || p[-1] == ',') && (p[n] == ',' || p[n] == 0)) return 1;
  return 0;
}

/* The vector width of the target: from its features when they are listed
   (the host's, or UOPC_JIT_FEATURES), else from the CPU's name. */
static unsigned vector_bits_of(const char *cpu, const char *features) {
  if (features[0]) return has_feature(features, "+avx512f") ? 512 : has_feature(features, "+avx") ? 256 : 128;
  static const char *const avx512[] = {"x86-64-v4", "skylake-avx512", "cascadelake", "cooperlake", "cannonlake",
                                       "icelake-client", "icelake-server", "tigerlake", "rocketlake",
                                       "sapphirerapids", "emeraldrapids", "graniterapids", "znver4", "znver5"};
  for (size_t i = 0; i < sizeof avx512 / sizeof *avx512; i++)
    if (!strcmp(cpu, avx512[i])) return 512;
  static const char *const avx[] = {"x86-64-v3", "sandybridge", "ivybridge", "haswell", "broadwell", "skylake",
                                    "alderlake", "raptorlake", "meteorlake", "arrowlake", "znver1", "znver2",
                                    "znver3", "bdver1", "bdver2", "bdver3", "bdver4", "btver2"};
  for (size_t i = 0; i < sizeof avx / sizeof *avx; i++)
    if (!strcmp(cpu, avx[i])) return 256;
  return 128;
}

static void target_cpu(uopi_jit_engine *g) {
  const char *cpu = uopi_env_token("UOPC_JIT_CPU", "-_.");
  const char *features = uopi_env_token("UOPC_JIT_FEATURES", "-_.+,");
  g->cpu = cpu ? LLVMCreateMessage(cpu) : LLVMGetHostCPUName();
  g->features = features ? LLVMCreateMessage(features) : cpu ? LLVMCreateMessage("") : LLVMGetHostCPUFeatures();
  g->vector_bits = g->cpu && g->features ? vector_bits_of(g->cpu, g->features) : 128;
}

static void release(uopi_jit_engine *g) {
  uopi_jit_tm_dispose_all();
  uopi_jit_linker_free(g->linker);
  if (g->triple) LLVMDisposeMessage(g->triple);
  if (g->dl) LLVMDisposeMessage(g->dl);
  if (g->cpu) LLVMDisposeMessage(g->cpu);
  if (g->features) LLVMDisposeMessage(g->features);
  free(g->target_id);
  g->linker = NULL;
  g->triple = g->dl = g->cpu = g->features = g->target_id = NULL;
}

/* The data layout string of the host TargetMachine (a TIER0 one, which the
   pool keeps for the first compile): what every module is given. */
static uopc_status host_layout(uopi_jit_engine *g, uopc_error *e) {
  LLVMTargetMachineRef tm = uopi_jit_tm_take(g, UOPI_JIT_TIER0, e);
  if (!tm) return UOPC_ERR_JIT;
  LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
  g->dl = LLVMCopyStringRepOfTargetData(td);
  LLVMDisposeTargetData(td);
  uopi_jit_tm_give(UOPI_JIT_TIER0, tm);
  return g->dl ? UOPC_OK : uopi_jit_fail(e, UOPC_ERR_NOMEM, "out of memory");
}

static uopc_status create(uopi_jit_engine *g, uopc_error *e) {
  if (process_failed) return uopi_jit_fail(e, UOPC_ERR_JIT, "LLVM has no native target for this host");
  char *t = LLVMGetDefaultTargetTriple();
  g->triple = t ? LLVMNormalizeTargetTriple(t) : NULL;
  if (t) LLVMDisposeMessage(t);
  target_cpu(g);
  g->live = 0;
  uopc_status st = g->triple && g->cpu && g->features ? UOPC_OK : uopi_jit_fail(e, UOPC_ERR_NOMEM, "out of memory");
  if (!st) st = host_layout(g, e);
  if (!st && !(g->linker = uopi_jit_linker_new()))
    st = uopi_jit_fail(e, UOPC_ERR_JIT, "cannot make the JIT's code memory (no memory manager could be created)");
  if (!st && !(g->target_id = make_target_id(g))) st = uopi_jit_fail(e, UOPC_ERR_NOMEM, "out of memory");
  if (st) release(g);
  return st;
}

uopc_status uopi_jit_get(uopi_jit_engine **g, uopc_error *e) {
  *g = &engine;
  if (atomic_load_explicit(&ready, memory_order_acquire)) return UOPC_OK;
  pthread_once(&process_once, process_init);
  pthread_mutex_lock(&init_lock);
  uopc_status st = UOPC_OK;
  if (!atomic_load_explicit(&ready, memory_order_relaxed)) {
    st = create(&engine, e);
    if (st == UOPC_OK) atomic_fetch_add_explicit(&generation, 1, memory_order_relaxed);
    if (st == UOPC_OK) atomic_store_explicit(&ready, 1, memory_order_release);
  }
  pthread_mutex_unlock(&init_lock);
  if (st) *g = NULL;
  return st;
}

uopc_status uopi_jit_init(uopc_error *e) {
  uopi_jit_engine *g;
  return uopi_jit_get(&g, e);
}

uopc_status uopi_jit_shutdown(uopc_error *e) {
  pthread_mutex_lock(&init_lock);
  pthread_mutex_lock(&engine.lock);
  long live = engine.live;
  pthread_mutex_unlock(&engine.lock);
  uopc_status st = UOPC_OK;
  if (live > 0) {
    st = uopi_jit_fail(e, UOPC_ERR_ARG, "JIT shutdown with %ld kernel(s) not freed", live);
  } else {
    atomic_store_explicit(&ready, 0, memory_order_release);
    release(&engine);
  }
  pthread_mutex_unlock(&init_lock);
  return st;
}

unsigned uopi_jit_vector_bits(void) {
  uopi_jit_engine *g;
  uopc_error e;
  return uopi_jit_get(&g, &e) == UOPC_OK ? g->vector_bits : 0;
}

const char *uopi_jit_memory(void) {
  return atomic_load_explicit(&ready, memory_order_acquire) ? uopi_jit_linker_memory(engine.linker) : "none";
}

const char *uopi_jit_target_id(void) {
  return atomic_load_explicit(&ready, memory_order_acquire) ? engine.target_id : NULL;
}

unsigned uopi_jit_generation(void) { return atomic_load_explicit(&generation, memory_order_relaxed); }

/* What LLVM reports while a module is optimized and compiled.  Without a
   handler LLVM prints every warning and remark to the host's stderr (a
   loop hint the vectorizer could not follow: "loop not vectorized: ...")
   and exits the process on an error.  Warnings, remarks and notes are about
   how fast the code is, never what it computes: dropped.  An error (an
   inline asm the assembler rejects, a backend's "unsupported ...": none is
   known to be reachable from a kernel the lowering emits) is recorded, the
   first one per module context, and the compile fails with it
   (uopi_jit_diag_check): LLVM goes on after a diagnostic its handler
   returns from, as clang does with backend errors, instead of exiting the
   host application. */
typedef struct diag_state {
  int failed;
  char msg[400];
} diag_state;

static void diagnostic(LLVMDiagnosticInfoRef di, void *ud) {
  diag_state *s = ud;
  if (LLVMGetDiagInfoSeverity(di) != LLVMDSError || !s || s->failed) return;
  char *d = LLVMGetDiagInfoDescription(di);
  snprintf(s->msg, sizeof s->msg, "%s", d && *d ? d : "(no description)");
  LLVMDisposeMessage(d);
  s->failed = 1;
}

uopc_status uopi_jit_diag_check(LLVMModuleRef m, uopc_error *e) {
  LLVMContextRef c = LLVMGetModuleContext(m);
  if (LLVMContextGetDiagnosticHandler(c) != diagnostic) return UOPC_OK; /* not made by uopi_jit_module_new */
  diag_state *s = LLVMContextGetDiagnosticContext(c);
  if (!s || !s->failed) return UOPC_OK;
  return uopi_jit_fail(e, UOPC_ERR_JIT, "LLVM error: %s", s->msg);
}

uopc_status uopi_jit_module_new(const char *name, LLVMModuleRef *out, uopc_error *e) {
  uopi_jit_engine *g;
  uopc_status st = uopi_jit_get(&g, e);
  *out = NULL;
  if (st) return st;
  diag_state *ds = calloc(1, sizeof *ds);
  if (!ds) return uopi_jit_fail(e, UOPC_ERR_NOMEM, "out of memory");
  LLVMContextRef lc = LLVMContextCreate();
  LLVMContextSetDiagnosticHandler(lc, diagnostic, ds);
  LLVMModuleRef m = LLVMModuleCreateWithNameInContext(name, lc);
  LLVMSetTarget(m, g->triple);
  LLVMSetDataLayout(m, g->dl);
  *out = m;
  return UOPC_OK;
}

void uopi_jit_module_free(LLVMModuleRef m) {
  if (!m) return;
  LLVMContextRef c = LLVMGetModuleContext(m);
  void *ds = LLVMContextGetDiagnosticHandler(c) == diagnostic ? LLVMContextGetDiagnosticContext(c) : NULL;
  LLVMDisposeModule(m);
  LLVMContextDispose(c);
  free(ds);
}
