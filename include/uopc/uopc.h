/* uopc/uopc.h - everything. */
#ifndef UOPC_UOPC_H
#define UOPC_UOPC_H
#include "uopc/version.h"
#include "uopc/error.h"
#include "uopc/ops.h"
#include "uopc/uop.h"
#include "uopc/rewrite.h"
#include "uopc/uir.h"
#include "uopc/viz.h"
#include "uopc/algebra.h"
#include "uopc/eval.h"
#include "uopc/jit.h"
#include "uopc/npy.h"
#include "uopc/cache.h"
#include "uopc/tensor.h"
#include "uopc/plan.h"
#endif
