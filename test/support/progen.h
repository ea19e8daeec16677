// Random closed tensor programs for the jit-run == run differential test:
// STACK literals and constants of every dtype (bool, i32, f32, f16, with
// edge values), elementwise ops (the broadcast of scalars included), casts,
// WHERE, every movement op, REDUCE over 1-2 trailing axes with add/mul/max,
// STACK and INDEX of shaped values, CALLs, shared subgraphs.  Ranks up to 3,
// axes up to 4 long.
#pragma once
#include <cstdint>
#include <random>
#include <string>

extern "C" {
#include "uopc/uopc.h"
}

// A new random program in c (never NULL: the generator retries choices the
// constructors refuse).  depth bounds the nesting.
uopc_node *gen_program(uopc_ctx *c, std::mt19937_64 &rng, int depth);

// `run` of u printed as `uopc run` prints it, or "error: MESSAGE".
std::string run_text(uopc_ctx *c, uopc_node *u);
// run with only the rules that keep poison visible: fold, WHERE on a constant
// condition, the evaluate rules (no rule that drops an undefined operand,
// such as x * 0 -> 0 or a bounds catch-all).  "error: ..." when the value is
// poison: where the plan may report an error although run gives a value.
std::string strict_run_text(uopc_ctx *c, uopc_node *u);
// Whether a plan result agrees with run's (equal, both errors, or the plan
// reports an undefined op where only the dropping rules gave run a value).
bool plan_agrees(uopc_ctx *c, uopc_node *u, const std::string &run, const std::string &plan);
// The same through a plan (uopc_plan_compile + uopc_plan_call).
// threads: uopc_compile_opts.threads (0: the engine's default).
std::string plan_text(uopc_ctx *c, uopc_node *u, uopc_tier tier = UOPC_TIER_FAST, uint32_t threads = 0);
// The same with every compile option (flags included).
std::string plan_text_opts(uopc_ctx *c, uopc_node *u, const uopc_compile_opts &o);
// 60 random programs from seed (6 rounds of 10 in a fresh context each, the
// fast and strong tiers by turns), each planned with `flags` at 1 and 2
// threads: "" when every plan agrees with run (plan_agrees), else each
// disagreement with its program.
std::string random_plans_disagree(uint64_t seed, unsigned flags);
