#include "slr/tied_erm/data.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels.hpp"
#include "slr/erm/normals.hpp"

namespace slr::tied_erm {

namespace {
void require(bool ok, const char* name, const std::string& reason) {
  if (!ok) throw std::invalid_argument(std::string(name) + ": " + reason);
}
} // namespace

std::size_t target_rank(double k0, std::size_t d) {
  require(d >= 2, "d", "must be >= 2");
  require(std::isfinite(k0) && k0 > 0 && k0 <= 1, "k0", "must be in (0, 1]");
  return std::max<std::size_t>(1, static_cast<std::size_t>(std::llround(k0 * static_cast<double>(d))));
}

teacher teacher::draw(std::size_t d, double k0, std::uint64_t seed) {
  const std::size_t r = target_rank(k0, d);
  Eigen::MatrixXd W(static_cast<Eigen::Index>(d), static_cast<Eigen::Index>(r));
  for (std::size_t j = 0; j < r; ++j)
    erm::normal_stream(seed, model::stream_purpose::teacher_weights, 0, static_cast<std::uint32_t>(j))
        .fill({W.col(static_cast<Eigen::Index>(j)).data(), d});
  teacher t;
  t.rank = r;
  t.S = W * W.transpose() / std::sqrt(static_cast<double>(r) * static_cast<double>(d));
  // Exact symmetry: the token products read S as its own transpose.
  t.S = (0.5 * (t.S + t.S.transpose())).eval();
  return t;
}

double teacher::second_moment() const noexcept { return S.squaredNorm() / static_cast<double>(S.rows()); }

double dataset_bytes(std::size_t count, int T, std::size_t d, tied::label_form form) noexcept {
  const double rows = static_cast<double>(count) * T;
  const double label_arrays = form == tied::label_form::seq2seq ? 3.0 : 2.0;
  return 8.0 * rows * (static_cast<double>(d) + label_arrays * T);
}

double dataset::bytes() const noexcept { return dataset_bytes(count_, T_, dimension(), form_); }

dataset dataset::generate(const tied::problem& problem, const teacher& teacher, std::size_t count,
                          std::uint64_t seed, model::stream_purpose purpose, std::uint64_t first_index) {
  problem.validate();
  require(count > 0, "count", "must be >= 1");
  const std::size_t d = teacher.dimension();
  require(d >= 2 && teacher.S.cols() == teacher.S.rows(), "teacher", "must be a square matrix of dimension >= 2");
  const int T = problem.T;
  const auto rows = static_cast<double>(count) * T;
  require(rows * static_cast<double>(d) < static_cast<double>(std::numeric_limits<int>::max()), "count",
          "n·T·d must stay below 2^31 (BLAS index range)");

  dataset out;
  out.count_ = count;
  out.T_ = T;
  const auto nT = static_cast<Eigen::Index>(count * static_cast<std::size_t>(T));
  out.tokens_.resize(nT, static_cast<Eigen::Index>(d));
  out.labels_.resize(nT, T);
  out.clean_.resize(nT, T);
  out.form_ = problem.labels;
  if (problem.labels == tied::label_form::seq2seq) out.gram_.resize(nT, T);
  for (std::size_t mu = 0; mu < count; ++mu)
    for (int a = 0; a < T; ++a)
      erm::normal_stream(seed, purpose, first_index + mu, static_cast<std::uint32_t>(a))
          .fill({out.tokens_.row(static_cast<Eigen::Index>(mu * T + a)).data(), d});

  const double trace = teacher.S.trace();
  const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(d));
  const double noise_scale = std::sqrt(problem.delta);
  const int L = problem.fields();
  std::vector<double> P(std::min(count, detail::block_sequences) * static_cast<std::size_t>(T) * d);
  std::vector<double> h(static_cast<std::size_t>(T * T)), noisy(static_cast<std::size_t>(T * T));
  std::vector<double> xi(static_cast<std::size_t>(L));
  for (std::size_t begin = 0; begin < count; begin += detail::block_sequences) {
    const std::size_t block = std::min(detail::block_sequences, count - begin);
    detail::multiply_tokens(out.tokens_, begin * T, block * T, teacher.S, P.data());
    for (std::size_t j = 0; j < block; ++j) {
      const std::size_t mu = begin + j;
      const std::size_t row0 = mu * static_cast<std::size_t>(T);
      detail::sequence_fields(out.tokens_.row(static_cast<Eigen::Index>(row0)).data(), P.data() + j * T * d, T, d,
                              trace, inv_sqrt_d, h.data());
      erm::normal_stream(seed, purpose, first_index + mu, static_cast<std::uint32_t>(T)).fill(xi);
      // Ξ_aa ~ N(0, 1), Ξ_ab = Ξ_ba ~ N(0, 1/2): the L fields z of §1.2 get iid noise of variance Δ/2.
      int l = 0;
      for (int a = 0; a < T; ++a)
        for (int b = a; b < T; ++b, ++l) {
          const double e = noise_scale * xi[static_cast<std::size_t>(l)] * (a == b ? 1.0 : std::sqrt(0.5));
          noisy[static_cast<std::size_t>(a * T + b)] = h[static_cast<std::size_t>(a * T + b)] + e;
          noisy[static_cast<std::size_t>(b * T + a)] = h[static_cast<std::size_t>(b * T + a)] + e;
        }
      for (int a = 0; a < T; ++a) {
        const auto r = static_cast<Eigen::Index>(row0 + static_cast<std::size_t>(a));
        detail::softmax_row(h.data() + a * T, T, problem.beta0, out.clean_.row(r).data());
        detail::softmax_row(noisy.data() + a * T, T, problem.beta0, out.labels_.row(r).data());
      }
      if (out.gram_.rows() > 0)
        for (int a = 0; a < T; ++a)
          for (int b = a; b < T; ++b) {
            const auto ra = static_cast<Eigen::Index>(row0 + static_cast<std::size_t>(a));
            const auto rb = static_cast<Eigen::Index>(row0 + static_cast<std::size_t>(b));
            out.gram_(ra, b) = out.gram_(rb, a) = out.tokens_.row(ra).dot(out.tokens_.row(rb)) / static_cast<double>(d);
          }
    }
  }
  return out;
}

} // namespace slr::tied_erm
