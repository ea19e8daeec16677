// The trace callback: BEGIN/RULE/END events in order, as many RULE events as
// the text trace prints lines, nested calls one level deeper.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/fmt.h"

namespace {
struct Rec {
  std::vector<uopc_trace_event> ev;
};
void record(void *ud, const uopc_trace_event *e) { static_cast<Rec *>(ud)->ev.push_back(*e); }
}  // namespace

TEST(TraceFn, EventsMatchTheTextTrace) {
  Ctx c;
  uopc_node *i = uopc_range(c, uopc_const_i(c, UOPC_DT_I32, 4), 0), *j = uopc_range(c, uopc_const_i(c, UOPC_DT_I32, 8), 1);
  uopc_node *e = uopc_mod_k(c, uopc_idiv_k(c, uopc_add(c, uopc_mul_k(c, i, 8), j), 8), 4);
  Rec rec;
  uopc_ctx_set_trace_fn(c, record, &rec);
  FILE *t = tmpfile();
  uopc_ctx_set_trace(c, t);
  uopc_node *r = uopc_graph_rewrite(c, e, uopc_rules_symbolic(), nullptr, 0);
  uopc_ctx_set_trace(c, nullptr);
  uopc_ctx_set_trace_fn(c, nullptr, nullptr);
  ASSERT_EQ(r, i);
  rewind(t);
  int lines = 0;
  char buf[512];
  while (fgets(buf, sizeof buf, t)) lines++;
  fclose(t);
  ASSERT_GE(rec.ev.size(), 2u);
  EXPECT_EQ(rec.ev.front().kind, UOPC_TRACE_BEGIN);
  EXPECT_EQ(rec.ev.front().before, e);
  EXPECT_STREQ(rec.ev.front().set, "symbolic");
  EXPECT_EQ(rec.ev.back().kind, UOPC_TRACE_END);
  EXPECT_EQ(rec.ev.back().after, i);
  int rules = 0;
  for (auto &x : rec.ev)
    if (x.kind == UOPC_TRACE_RULE) {
      rules++;
      ASSERT_NE(x.rule, nullptr);
      EXPECT_NE(x.rule->file, nullptr);
      EXPECT_GT(x.rule->line, 0);
    }
  EXPECT_EQ(rules, lines);
  EXPECT_EQ(rules, 5);
  EXPECT_STREQ(rec.ev[1].rule->name, "div_sum");
}
