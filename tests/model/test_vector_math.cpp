// The element-wise functions of the activations against the scalar std:: ones, and their
// independence of an element's position in the span (what keeps results thread-count free).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "slr/model/vector_math.hpp"

namespace {
namespace vm = slr::model::vector_math;
using function = void (*)(std::span<const double>, std::span<double>) noexcept;
using reference = double (*)(double);

struct case_t {
  const char* name;
  function f;
  reference ref;
  double lo, hi;
};

// Units in the last place of the reference value, for relative error bounds.
double ulps(double value, double expected) {
  if (value == expected) return 0;
  const double ulp = std::nextafter(std::abs(expected), std::numeric_limits<double>::infinity()) - std::abs(expected);
  return std::abs(value - expected) / ulp;
}

// n arguments drawn uniformly from the function's tested range.
std::vector<double> arguments(const case_t& c, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(c.lo, c.hi);
  std::vector<double> x(n);
  for (auto& v : x) v = uniform(rng);
  return x;
}

class VectorMath : public ::testing::TestWithParam<case_t> {};

TEST_P(VectorMath, WithinFiveUlpOfTheScalarFunctionOverItsRange) {
  const auto& c = GetParam();
  auto x = arguments(c, 10007, 7);
  std::vector<double> y(x.size());
  x[0] = 0.0, x[1] = c.lo, x[2] = c.hi, x[3] = 1e-300, x[4] = -1e-17;
  c.f(x, y);
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) worst = std::max(worst, ulps(y[i], c.ref(x[i])));
  // glibc documents up to 4 ulp from the exact value for its vector functions, the scalar ones
  // within 1: at most 5 apart.
  EXPECT_LE(worst, 5.0) << c.name << " on " << vm::backend();
  RecordProperty("worst_ulp", std::to_string(worst));
}

TEST_P(VectorMath, AnElementsResultDoesNotDependOnItsPositionOrTheSpanLength) {
  const auto& c = GetParam();
  const auto x = arguments(c, 23, 11);
  std::vector<double> whole(x.size());
  c.f(x, whole);
  for (std::size_t length = 1; length <= 9; ++length)
    for (std::size_t start = 0; start + length <= x.size(); start += 5) {
      std::vector<double> part(length);
      c.f(std::span<const double>(x).subspan(start, length), part);
      for (std::size_t i = 0; i < length; ++i) ASSERT_EQ(part[i], whole[start + i]) << c.name << " length " << length;
    }
  // In place (y = x) gives the same.
  auto in_place = x;
  c.f(in_place, in_place);
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(in_place[i], whole[i]);
}

double exp_ref(double x) { return std::exp(x); }
double erf_ref(double x) { return std::erf(x); }
double log1p_ref(double x) { return std::log1p(x); }

INSTANTIATE_TEST_SUITE_P(Functions, VectorMath,
                         ::testing::Values(case_t{"exp", &vm::exp, &exp_ref, -700.0, 700.0},
                                           case_t{"erf", &vm::erf, &erf_ref, -6.0, 6.0},
                                           case_t{"log1p", &vm::log1p, &log1p_ref, -0.999, 1e3}),
                         [](const auto& p) { return std::string(p.param.name); });

TEST(VectorMath, LimitsAsTheScalarFunctions) {
  const std::vector<double> x = {-1e4, 1e4, -std::numeric_limits<double>::infinity()};
  std::vector<double> y(x.size());
  vm::exp(x, y);
  EXPECT_EQ(y[0], 0.0);
  EXPECT_EQ(y[1], std::numeric_limits<double>::infinity());
  EXPECT_EQ(y[2], 0.0);
  vm::erf(x, y);
  EXPECT_EQ(y[0], -1.0);
  EXPECT_EQ(y[1], 1.0);
  EXPECT_EQ(y[2], -1.0);
}
} // namespace
