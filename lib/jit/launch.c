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
 * The kernel is called directly with its buffers as arguments (every buffer
 * a pointer parameter, so the vectorizer can see noalias on each); the switch
 * below gives each arity its own call.
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

_Static_assert(UOPI_JIT_MAX_BUFS == 16, "one CASE below per arity");

/* Pn: n pointer parameter types; Bn: the first n buffers. */
#define P1 void *
#define P2 P1, void *
#define P3 P2, void *
#define P4 P3, void *
#define P5 P4, void *
#define P6 P5, void *
#define P7 P6, void *
#define P8 P7, void *
#define P9 P8, void *
#define P10 P9, void *
#define P11 P10, void *
#define P12 P11, void *
#define P13 P12, void *
#define P14 P13, void *
#define P15 P14, void *
#define P16 P15, void *
#define B1 b[0]
#define B2 B1, b[1]
#define B3 B2, b[2]
#define B4 B3, b[3]
#define B5 B4, b[4]
#define B6 B5, b[5]
#define B7 B6, b[6]
#define B8 B7, b[7]
#define B9 B8, b[8]
#define B10 B9, b[9]
#define B11 B10, b[10]
#define B12 B11, b[11]
#define B13 B12, b[12]
#define B14 B13, b[13]
#define B15 B14, b[14]
#define B16 B15, b[15]
#define CASE(n) \
  case n: ((void (*)(P##n))fn)(B##n); break;

static void call(void (*fn)(void), void *const *b, unsigned n) {
  switch (n) {
  case 0: fn(); break;
  CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7) CASE(8)
  CASE(9) CASE(10) CASE(11) CASE(12) CASE(13) CASE(14) CASE(15) CASE(16)
  default: uopi_unreachable();
  }
}

uopc_status uopi_jit_call(const uopi_jit_code *k, void *const *bufs, unsigned n, uopc_error *e) {
  if (n != k->nbufs)
    return uopi_jit_fail(e, UOPC_ERR_ARG, "kernel takes %u buffers, called with %u", k->nbufs, n);
  fpstate caller = fp_enter();
  call(k->fn, bufs, n);
  fp_leave(caller);
  return UOPC_OK;
}
