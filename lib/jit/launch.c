/* lib/jit/launch.c - calling a kernel in a known floating-point environment.
 *
 * JIT code follows whatever MXCSR the calling thread has: with FTZ/DAZ set
 * (as -ffast-math binaries and some audio/ML libraries leave it), 2^-140 * 1
 * becomes 0.  The launcher runs every kernel with the control bits of MXCSR
 * at their defaults (0x1F80: round to nearest, FTZ and DAZ off, every
 * exception masked) and gives the caller its control bits back after.  The
 * sticky exception flags behave as for any C function call: the kernel's
 * flags are added to the caller's.
 *
 * Cost: reading MXCSR (stmxcsr) is the expensive part, ~9.5 ns on the
 * project's Zen 4 VM, while ldmxcsr costs ~0.5 ns.  A caller already in the
 * default mode (the common case) pays one stmxcsr; any other pays two, plus
 * two ldmxcsr.
 *
 * The kernel is called with the caller's array of buffer pointers as its one
 * argument (entry.c: the kernel loads each pointer once, and its body keeps
 * noalias on each), so one call serves every number of buffers.
 */
#include "jit/jit_impl.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define MXCSR_CONTROL 0xFFC0u /* DAZ, exception masks, rounding, FTZ */
#define MXCSR_FLAGS 0x003Fu   /* sticky exception flags */
#define MXCSR_DEFAULT 0x1F80u
typedef unsigned fpstate;
static fpstate fp_enter(void) {
  fpstate caller = _mm_getcsr();
  if ((caller & MXCSR_CONTROL) != MXCSR_DEFAULT) _mm_setcsr(MXCSR_DEFAULT | (caller & MXCSR_FLAGS));
  return caller;
}
static void fp_leave(fpstate caller) {
  if ((caller & MXCSR_CONTROL) != MXCSR_DEFAULT)
    _mm_setcsr((caller & MXCSR_CONTROL) | (_mm_getcsr() & MXCSR_FLAGS));
}
#else
/* Elsewhere: the C default environment (on AArch64 it clears FPCR.FZ too);
   feupdateenv restores the caller's and re-raises the kernel's flags. */
#include <fenv.h>
typedef fenv_t fpstate;
static fpstate fp_enter(void) {
  fenv_t caller;
  fegetenv(&caller);
  fesetenv(FE_DFL_ENV);
  return caller;
}
static void fp_leave(fpstate caller) { feupdateenv(&caller); }
#endif

/* Every kernel has the same type (entry.c): one pointer to its arguments. */
typedef void (*entry_fn)(void *const *args);

uopc_status uopi_jit_call(const uopi_jit_code *k, void *const *bufs, unsigned n, uopc_error *e) {
  if (n != k->nbufs)
    return uopi_jit_fail(e, UOPC_ERR_ARG, "kernel takes %u buffers, called with %u", k->nbufs, n);
  entry_fn fn = (entry_fn)(uintptr_t)k->fn;
  fpstate caller = fp_enter();
  fn(bufs);
  fp_leave(caller);
  return UOPC_OK;
}
