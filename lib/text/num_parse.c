/* lib/text/num_parse.c - a decimal float literal to the nearest double.
 *
 * The literal is rewritten as "DIGITSeEXP" (no decimal point, so strtod's
 * locale does not matter) and handed to strtod, which rounds correctly.
 * Digits past the 800th are folded into one sticky digit: 800 significant
 * digits are more than any double needs to round correctly (the longest
 * exact halfway case has 767), so the result is the same and strtod's work
 * stays bounded however long the literal is.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "text/text.h"

#define KEEP_DIGITS 800
#define EXP_CLAMP 100000
#define EXP_LIMIT 1000000000000000LL /* far beyond any double, far below int64 */

int uopi_decimal_to_double(const char *s, size_t len, double *out) {
  char buf[KEEP_DIGITS + 40];
  size_t k = 0, p = 0, ndig = 0;
  int neg = 0, sticky = 0;
  int64_t exp10 = 0; /* value = digits * 10^exp10 */
  if (p < len && s[p] == '-') neg = 1, p++;
  if (neg) buf[k++] = '-';
  /* integer and fraction digits; leading zeros dropped */
  for (int frac = 0; p < len; p++) {
    char ch = s[p];
    if (ch == '.') {
      frac = 1;
      continue;
    }
    if (ch < '0' || ch > '9') break;
    if (frac) exp10--;
    if (ch == '0' && ndig == 0) continue;
    if (ndig < KEEP_DIGITS) {
      buf[k++] = ch;
    } else {
      if (ch != '0') sticky = 1;
      exp10++; /* a dropped digit scales what was kept */
    }
    ndig++;
  }
  if (p < len && (s[p] == 'e' || s[p] == 'E')) {
    p++;
    int eneg = 0;
    if (p < len && (s[p] == '+' || s[p] == '-')) eneg = s[p++] == '-';
    int64_t e = 0;
    for (; p < len && s[p] >= '0' && s[p] <= '9'; p++)
      if (e < EXP_LIMIT) e = e * 10 + (s[p] - '0');
    exp10 += eneg ? -e : e;
  }
  if (ndig == 0) {
    *out = neg ? -0.0 : 0.0;
    return 1;
  }
  if (sticky) {
    buf[k++] = '1';
    exp10--;
  }
  if (exp10 > EXP_CLAMP) exp10 = EXP_CLAMP;
  if (exp10 < -EXP_CLAMP - KEEP_DIGITS) exp10 = -EXP_CLAMP - KEEP_DIGITS;
  snprintf(buf + k, sizeof buf - k, "e%d", (int)exp10);
  int saved = errno;
  double v = strtod(buf, NULL);
  errno = saved;
  *out = v;
  return !isinf(v);
}
