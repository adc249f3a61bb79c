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

namespace {
using slr::erm::philox_kernel;

// Every vectorised Philox kernel this CPU has gives the portable loop's bits, and the portable
// loop gives Random123's Philox4x32-10 (checked above through philox_4x32_10).
TEST(Normals, PhiloxKernelsAgree) {
  std::array<std::uint64_t, slr::erm::philox_batch_blocks> radius{}, angle{}, radius_ref{}, angle_ref{};
  int kernels_checked = 0;
  for (const auto kernel : {philox_kernel::avx2, philox_kernel::avx512}) {
    if (!slr::erm::philox_kernel_available(kernel)) continue;
    ++kernels_checked;
    for (std::uint32_t trial = 0; trial < 50; ++trial) {
      const std::array<std::uint32_t, 2> key{0x9e3779b9U * trial + 1, 0x7f4a7c15U ^ trial};
      const std::uint32_t row = trial % 7;
      const std::uint64_t index = 0x1234567890ULL * trial + trial;
      const std::size_t start = (trial * 4099) % (std::size_t{1} << 32) + (trial == 49 ? 0xFFFFFFC0U : 0);
      slr::erm::philox_blocks(philox_kernel::portable, key, row, index, start, radius_ref, angle_ref);
      slr::erm::philox_blocks(kernel, key, row, index, start, radius, angle);
      ASSERT_EQ(radius, radius_ref) << "kernel " << static_cast<int>(kernel) << " trial " << trial;
      ASSERT_EQ(angle, angle_ref) << "kernel " << static_cast<int>(kernel) << " trial " << trial;
    }
  }
  // The portable batch against the scalar definition, block by block.
  const std::array<std::uint32_t, 2> key{11, 22};
  slr::erm::philox_blocks(philox_kernel::portable, key, 3, 0x500000007ULL, 640, radius_ref, angle_ref);
  for (std::size_t j = 0; j < radius_ref.size(); ++j) {
    const auto w = slr::erm::philox_4x32_10({static_cast<std::uint32_t>(640 + j), 3, 7, 5}, key);
    ASSERT_EQ(radius_ref[j], ((std::uint64_t{w[0]} << 32) | w[1]) >> 12);
    ASSERT_EQ(angle_ref[j], ((std::uint64_t{w[2]} << 32) | w[3]) >> 11);
  }
  RecordProperty("vector_kernels_checked", kernels_checked);
}

// A stream's numbers are Box–Muller of the scalar Philox of their block, whatever kernel fill() uses.
TEST(Normals, StreamMatchesScalarDefinition) {
  const normal_stream stream(2024, stream_purpose::training_data, 0x100000003ULL, 2);
  std::vector<double> x(1001);
  stream.fill(x);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const auto block = static_cast<std::uint32_t>(i / 2);
    const auto w = slr::erm::philox_4x32_10({block, 2, 3, 1}, stream.key());
    const auto pair = slr::erm::box_muller(((std::uint64_t{w[0]} << 32) | w[1]) >> 12,
                                           ((std::uint64_t{w[2]} << 32) | w[3]) >> 11);
    ASSERT_EQ(x[i], pair[i % 2]) << "position " << i;
  }
}
} // namespace
