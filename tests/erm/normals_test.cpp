// The bulk normal generator: bit-identical Philox to Random123, Box–Muller accurate against
// libm, moments and tails of N(0, 1), addressing independent of the array length.
#include "slr/erm/normals.hpp"

#include <Random123/philox.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

namespace {
using slr::erm::normal_stream;
using slr::model::stream_purpose;

TEST(Normals, PhiloxMatchesRandom123) {
  r123::Philox4x32 reference;
  for (std::uint32_t i = 0; i < 200; ++i) {
    const r123::Philox4x32::ctr_type ctr = {{i, 7U * i + 1, 0xdeadbeefU ^ i, i * i}};
    const r123::Philox4x32::key_type key = {{0x12345678U + i, 0x9abcdef0U}};
    const auto expected = reference(ctr, key);
    const auto got = slr::erm::philox_4x32_10({ctr[0], ctr[1], ctr[2], ctr[3]}, {key[0], key[1]});
    for (int j = 0; j < 4; ++j) ASSERT_EQ(got[static_cast<std::size_t>(j)], expected[static_cast<std::size_t>(j)]);
  }
}

TEST(Normals, BoxMullerMatchesLibm) {
  // a spread over [0, 2^52) including both ends (a = 0 is the far tail), b over [0, 2^53).
  double worst = 0;
  std::uint64_t state = 88172645463325252ULL;
  for (int n = 0; n < 200000; ++n) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    std::uint64_t a = state >> 12;
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    const std::uint64_t b = state >> 11;
    if (n == 0) a = 0;
    if (n == 1) a = (std::uint64_t{1} << 52) - 1;
    const double u1 = (static_cast<double>(a) + 0.5) * 0x1.0p-52;
    const double theta = 2 * std::numbers::pi * (static_cast<double>(b) + 0.5) * 0x1.0p-53;
    const double r = std::sqrt(-2 * std::log(u1));
    const auto got = slr::erm::box_muller(a, b);
    worst = std::max({worst, std::abs(got[0] - r * std::cos(theta)), std::abs(got[1] - r * std::sin(theta))});
  }
  EXPECT_LT(worst, 1e-13);
}

TEST(Normals, MomentsAndTails) {
  const std::size_t n = 2'000'000;
  std::vector<double> x(n);
  normal_stream(42, stream_purpose::training_data, 3, 1).fill(x);
  double m1 = 0, m2 = 0, m4 = 0;
  std::size_t beyond3 = 0;
  for (double v : x) {
    m1 += v;
    m2 += v * v;
    m4 += v * v * v * v;
    beyond3 += std::abs(v) > 3 ? 1 : 0;
  }
  m1 /= n;
  m2 /= n;
  m4 /= n;
  const double sn = std::sqrt(static_cast<double>(n));
  EXPECT_LT(std::abs(m1), 5 / sn);                    // sd of the mean 1/√n
  EXPECT_LT(std::abs(m2 - 1), 5 * std::sqrt(2.0) / sn); // sd of m2: √2/√n
  EXPECT_LT(std::abs(m4 - 3), 5 * std::sqrt(96.0) / sn); // sd of m4: √(105 − 9)/√n
  const double p3 = std::erfc(3 / std::sqrt(2.0));       // P(|x| > 3) = 0.0026998
  EXPECT_LT(std::abs(static_cast<double>(beyond3) / n - p3), 5 * std::sqrt(p3 / n));
}

TEST(Normals, AddressingIndependentOfLength) {
  std::vector<double> a(1001), b(37);
  normal_stream(5, stream_purpose::test_data, 12, 2).fill(a);
  normal_stream(5, stream_purpose::test_data, 12, 2).fill(b);
  for (std::size_t i = 0; i < b.size(); ++i) EXPECT_EQ(a[i], b[i]);
  std::vector<double> c(1001);
  normal_stream(5, stream_purpose::test_data, 13, 2).fill(c); // another sequence: other numbers
  normal_stream(5, stream_purpose::training_data, 12, 2).fill(b);
  EXPECT_NE(a[0], c[0]);
  EXPECT_NE(a[0], b[0]);
}
} // namespace
