#include "support/fmt.h"

#include <vector>

std::string fmt(uopc_ctx *c, uopc_node *u) {
  // iterative post-order so deep graphs are fine
  struct F {
    uopc_node *u;
    uint32_t next;
  };
  std::vector<F> st{{u, 0}};
  std::vector<std::string> out;
  while (!st.empty()) {
    F &f = st.back();
    if (f.next < f.u->nsrc) {
      uopc_node *s = f.u->src[f.next++];
      st.push_back({s, 0});
      continue;
    }
    uopc_node *x = f.u;
    st.pop_back();
    std::vector<std::string> a(out.end() - x->nsrc, out.end());
    out.resize(out.size() - x->nsrc);
    std::string r;
    switch (x->op) {
    case UOPC_OP_CONST: {
      char b[40];
      if (uopc_dtype_is_float((uopc_dtype)x->dtype)) uopc_fmt_double(x->arg.f, b);
      else if (x->dtype == UOPC_DT_BOOL) snprintf(b, sizeof b, "%s", x->arg.i ? "True" : "False");
      else snprintf(b, sizeof b, "%lld", (long long)x->arg.i);
      r = b;
      break;
    }
    case UOPC_OP_RANGE: r = std::string(1, "ijklmn"[x->arg.i % 6]); break;
    case UOPC_OP_PARAM: r = std::string(1, "xyf"[x->arg.i % 3]); break;
    case UOPC_OP_ADD: r = "(" + a[0] + "+" + a[1] + ")"; break;
    case UOPC_OP_MUL: r = "(" + a[0] + "*" + a[1] + ")"; break;
    case UOPC_OP_FLOORDIV: r = "(" + a[0] + "//" + a[1] + ")"; break;
    case UOPC_OP_FLOORMOD: r = "(" + a[0] + "%" + a[1] + ")"; break;
    case UOPC_OP_CMPLT: r = "(" + a[0] + "<" + a[1] + ")"; break;
    case UOPC_OP_CMPNE: r = "(" + a[0] + "!=" + a[1] + ")"; break;
    case UOPC_OP_MAX: r = "max(" + a[0] + ", " + a[1] + ")"; break;
    case UOPC_OP_WHERE: r = "(" + a[0] + " ? " + a[1] + " : " + a[2] + ")"; break;
    default: {
      std::string name = uopc_op_spelling((uopc_op)x->op);
      r = name + "(";
      for (size_t i = 0; i < a.size(); i++) r += (i ? ", " : "") + a[i];
      r += ")";
    }
    }
    (void)c;
    out.push_back(r);
  }
  return out.back();
}
