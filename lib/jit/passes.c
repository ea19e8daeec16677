/* lib/jit/passes.c - the IR pipelines of the two tiers, and prepare.
 *
 * TIER0 is the short pipeline measured in docs/jit.md: early CSE (one
 * value for a + b and b + a, which alias analysis then sees as the same
 * address), LICM (hoists the loop-invariant loads of a loop nest), the loop
 * vectorizer at the host's width without interleaving, alignment from
 * assumptions (a streaming kernel's aligned copy: nontemporal.c), simplifycfg to clean
 * up after it, and LICM again: a plan's register tile (docs/loops.md) is a
 * 16-wide loop that the vectorizer turns into straight-line vector code,
 * whose accumulators at loop-invariant addresses the second LICM promotes
 * to registers across the reduce loop.  indvars (before the vectorizer)
 * gives loops 64-bit counters: FastISel otherwise keeps a 32-bit add and a
 * zero extension in every address.  The unroll pass unrolls only the loops
 * the lowering marks (a strict serial float reduction: codegen/emit.c), none
 * by its own heuristics.  No mem2reg/SROA, no loop rotation: the lowering
 * emits SSA and bottom-tested loops itself.  TIER2 is LLVM's default<O2>
 * with the SLP vectorizer on, as clang -O2 runs it, except on a module whose
 * loops it makes slower (TIER0's pipeline then: jit.h, "TIER0's IR at
 * TIER2").  A module marked "no
 * vectorize" (jit.h) runs TIER0's pipeline without the loop vectorizer at
 * every tier.  A fast-math module (jit.h, "fast
 * math") runs TIER0 with the vectorizer's own interleave count: a reduction
 * marked reassoc then gets several vector accumulators (the latency of one
 * dependent vector add per iteration is what holds a sum below bandwidth).
 *
 * The passes run with a host TargetMachine: without one there is no TTI and
 * nothing is vectorized.
 */
#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <string.h>

#include "jit/jit_impl.h"

/* loop unrolling only where the lowering asks for it (llvm.loop.unroll.count on a
   serial reduction, codegen/emit.c): no unrolling by the pass's own heuristics */
#define UNROLL_ASKED "loop-unroll<O2;no-partial;no-runtime;no-peeling;no-upperbound;full-unroll-max=0>"
static const char tier0_pipeline[] =
    "function(early-cse,loop-mssa(licm),loop(indvars),loop-vectorize<interleave-forced-only>," UNROLL_ASKED
    ",alignment-from-assumptions,simplifycfg,loop-mssa(licm))";
static const char tier0_fast_pipeline[] =
    "function(early-cse,loop-mssa(licm),loop(indvars),loop-vectorize," UNROLL_ASKED
    ",alignment-from-assumptions,simplifycfg,loop-mssa(licm))";
/* TIER0 without the loop vectorizer, for a module marked "no vectorize" */
static const char tier0_novec_pipeline[] =
    "function(early-cse,loop-mssa(licm),loop(indvars)," UNROLL_ASKED ",alignment-from-assumptions,simplifycfg,loop-mssa(licm))";
static const char tier2_pipeline[] = "default<O2>";
static const char fast_flag[] = "uopc.fast-math";
static const char novec_flag[] = "uopc.no-vectorize";
static const char tier0_ir_flag[] = "uopc.tier0-ir";

uopc_status uopi_jit_check_tier(uopi_jit_tier t, uopc_error *e) {
  if (t == UOPI_JIT_TIER0 || t == UOPI_JIT_TIER1 || t == UOPI_JIT_TIER2) return UOPC_OK;
  return uopi_jit_fail(e, UOPC_ERR_ARG, "unknown JIT tier %d", (int)t);
}

const char *uopi_jit_tier_pipeline(uopi_jit_tier t) {
  /* TIER1 differs from TIER0 in codegen only (the tier is in the cache keys too) */
  return t == UOPI_JIT_TIER0 || t == UOPI_JIT_TIER1 ? tier0_pipeline : t == UOPI_JIT_TIER2 ? tier2_pipeline : NULL;
}

const char *uopi_jit_pipeline(uopi_jit_tier t, int fast) {
  return fast && t != UOPI_JIT_TIER2 && uopi_jit_tier_pipeline(t) ? tier0_fast_pipeline : uopi_jit_tier_pipeline(t);
}

int uopi_jit_flag_has(LLVMModuleRef m, const char *name) { return LLVMGetModuleFlag(m, name, strlen(name)) != NULL; }

void uopi_jit_flag_set(LLVMModuleRef m, const char *name) {
  if (uopi_jit_flag_has(m, name)) return;
  LLVMContextRef c = LLVMGetModuleContext(m);
  LLVMAddModuleFlag(m, LLVMModuleFlagBehaviorError, name, strlen(name),
                    LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(c), 1, 0)));
}

void uopi_jit_module_set_fast(LLVMModuleRef m) { uopi_jit_flag_set(m, fast_flag); }
int uopi_jit_module_fast(LLVMModuleRef m) { return uopi_jit_flag_has(m, fast_flag); }
void uopi_jit_module_set_novec(LLVMModuleRef m) { uopi_jit_flag_set(m, novec_flag); }
int uopi_jit_module_novec(LLVMModuleRef m) { return uopi_jit_flag_has(m, novec_flag); }
void uopi_jit_module_set_tier0_ir(LLVMModuleRef m) { uopi_jit_flag_set(m, tier0_ir_flag); }
int uopi_jit_module_tier0_ir(LLVMModuleRef m) { return uopi_jit_flag_has(m, tier0_ir_flag); }

uopc_status uopi_jit_verify(LLVMModuleRef m, uopc_error *e) {
  char *msg = NULL;
  if (LLVMVerifyModule(m, LLVMReturnStatusAction, &msg)) return uopi_jit_fail_msg(e, msg, "invalid LLVM module");
  if (msg) LLVMDisposeMessage(msg);
  return UOPC_OK;
}

uopc_status uopi_jit_prepare(LLVMModuleRef m, uopi_jit_tier t, uopc_error *e) {
  uopc_status st = uopi_jit_verify(m, e);
  return st ? st : uopi_jit_passes(m, t, e);
}

uopc_status uopi_jit_passes(LLVMModuleRef m, uopi_jit_tier t, uopc_error *e) {
  uopi_jit_engine *g;
  uopc_status st = uopi_jit_check_tier(t, e);
  if (st == UOPC_OK) st = uopi_jit_get(&g, e);
  if (st) return st;
  LLVMSetTarget(m, g->triple);
  LLVMSetDataLayout(m, g->dl);

  LLVMTargetMachineRef tm = uopi_jit_tm_take(g, t, e);
  if (!tm) return UOPC_ERR_JIT;
  LLVMPassBuilderOptionsRef o = LLVMCreatePassBuilderOptions();
  const char *pipeline = uopi_jit_pipeline(t, uopi_jit_module_fast(m));
  if (uopi_jit_module_novec(m)) {
    /* neither vectorizer, at any tier (jit.h, "no vectorize"): TIER0's pipeline without
       the loop vectorizer.  Not default<O2> with the pass builder's LoopVectorization and
       SLPVectorization options off: parsing a pipeline alias sets both from its level
       over the caller's options (LLVM's setupOptionsForPipelineAlias; docs/decisions.md,
       stop 34) */
    pipeline = tier0_novec_pipeline;
  } else if (t == UOPI_JIT_TIER2 && uopi_jit_module_tier0_ir(m)) {
    /* loops default<O2> makes slower than TIER0's pipeline does (jit.h,
       "TIER0's IR at TIER2"); codegen stays the tier's */
    pipeline = tier0_pipeline;
  } else if (t == UOPI_JIT_TIER2) {
    LLVMPassBuilderOptionsSetSLPVectorization(o, 1); /* what default<O2> sets anyway (above) */
  }
  LLVMErrorRef err = LLVMRunPasses(m, pipeline, tm, o);
  LLVMDisposePassBuilderOptions(o);
  uopi_jit_tm_give(t, tm);
  if (err) return uopi_jit_fail_err(e, err, "LLVM passes failed");
  if ((st = uopi_jit_diag_check(m, e)) != UOPC_OK) return st;
  if (uopi_jit_module_stream(m)) uopi_jit_mark_nontemporal(m); /* streaming stores (nontemporal.c) */
  if (t == UOPI_JIT_TIER0) uopi_jit_sink_to_uses(m); /* for CodeGen None's registers (sink.c) */
  uopi_jit_bound_blocks(m, UOPI_JIT_BLOCK_MAX); /* for the machine scheduler (blocks.c) */
  return UOPC_OK;
}
