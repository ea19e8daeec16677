// bench/timing.h - the wall clock and the summary of repeated runs that the
// side-by-side benchmark programs (bench_plans, bench_poison) print.
#pragma once
#include <algorithm>
#include <chrono>
#include <vector>

using Clock = std::chrono::steady_clock;

// Milliseconds from a to b.
inline double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// The median (of an even count: the mean of the middle two), min and max.
struct Stats {
  double med, min, max;
};
inline Stats Of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return {n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v.front(), v.back()};
}
