// The Fig 3 ERM slices train 9 cells (softmax, linear, erf × r_k = r_v ∈ {0.01, 0.1, 1}) on one
// data draw each. Could one read of the tokens serve all the cells of a draw? This program builds
// the batched risk — blocks of ~1 MB of tokens multiplied by the stacked weights
// [k_1 … k_m v_1 … v_m] (OpenBLAS dgemm), the per-sequence activations, then the transposed
// product for the gradients — checks each cell against the library's single-cell risk
// (loss.hpp; objective to 1e-12, gradient to 1e-11 of its scale, else exit 1), and times one
// batched evaluation of the 9 cells against 9 single-cell evaluations, in read passes over the
// tokens. Results and the conclusion: tests/bench/README.md, "Batched evaluation of cells that
// share their data".
//   Usage: bench_erm_batch [D] [alpha] [f64|f32] [block_bytes]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>
#include <cblas.h>

#include "cpu_info.hpp"
#include "slr/erm/data.hpp"
#include "slr/erm/loss.hpp"
#include "slr/erm/trainer.hpp"
#include "slr/model/activation.hpp"
#include "slr/model/parallel.hpp"

// OpenBLAS's own control (declared here: the cblas.h found first may be another vendor's).
extern "C" void openblas_set_num_threads(int threads);

namespace bench_batch {
using namespace slr;

struct risk_cell {
  model::activation_spec activation;
  double r_k = 0;
  double r_v = 0;
};

// F_c and ∇F_c of every cell c at the columns of w (2D × cells), the tokens read once per
// evaluation for all cells.
class batched_risk {
public:
  batched_risk(const erm::sequence_data& data, std::vector<risk_cell> cells, double block_bytes);
  [[nodiscard]] std::vector<erm::loss_value> evaluate(const Eigen::MatrixXd& w, const std::vector<bool>& wanted,
                                                      Eigen::MatrixXd& gradient) const;
  [[nodiscard]] std::size_t cells() const noexcept { return cells_.size(); }
  [[nodiscard]] std::size_t dimension() const noexcept { return data_.dimension(); }

private:
  const erm::sequence_data& data_;
  std::vector<risk_cell> cells_;
  std::vector<std::unique_ptr<const model::activation>> activations_;
  double block_bytes_;
};
} // namespace bench_batch

namespace bench_batch {
namespace {
// Sequences per chunk of the deterministic reduction, as in loss.cpp: a function of N only.
std::size_t chunk_size(std::size_t sequences) { return std::max<std::size_t>(16, (sequences + 63) / 64); }


using row_matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct batch_partial {
  Eigen::MatrixXd gradient; // D × 2m: the k-gradients of the m cells, then their v-gradients
  std::vector<double> loss; // Σ ½r² per cell
  batch_partial& operator+=(const batch_partial& other) {
    gradient += other.gradient;
    for (std::size_t j = 0; j < loss.size(); ++j) loss[j] += other.loss[j];
    return *this;
  }
};

// Per-thread scratch: the block as doubles (f32 tokens are widened once per block), the
// projections and the gradient coefficients, one sequence's fields.
struct block_scratch {
  row_matrix tokens, projections, coefficients;
  std::vector<double> chi, z, sigma, jt;
};

template <class T>
const double* block_as_double(const T* tokens, std::size_t entries, row_matrix& buffer, std::size_t rows,
                              std::size_t D) {
  if constexpr (std::is_same_v<T, double>) {
    (void)entries, (void)buffer, (void)rows, (void)D;
    return tokens;
  } else {
    buffer.resize(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(D));
    std::transform(tokens, tokens + entries, buffer.data(), [](float x) { return static_cast<double>(x); });
    return buffer.data();
  }
}
} // namespace

batched_risk::batched_risk(const erm::sequence_data& data, std::vector<risk_cell> cells, double block_bytes)
    : data_(data), cells_(std::move(cells)), block_bytes_(block_bytes) {
  openblas_set_num_threads(1); // the reduction's threads are ours; OpenBLAS's would change the sums
  if (cells_.empty()) throw std::invalid_argument("batched risk: no cell");
  for (std::size_t c = 0; c < cells_.size(); ++c) {
    const auto& cell = cells_[c];
    if (!(cell.r_k >= 0) || !std::isfinite(cell.r_k) || !(cell.r_v >= 0) || !std::isfinite(cell.r_v))
      throw std::invalid_argument("batched risk: cell " + std::to_string(c) + ": r_k and r_v must be finite and >= 0");
    activations_.push_back(model::make_activation(cell.activation));
  }
}


std::vector<erm::loss_value> batched_risk::evaluate(const Eigen::MatrixXd& w, const std::vector<bool>& wanted,
                                               Eigen::MatrixXd& gradient) const {
  const std::size_t D = dimension(), m = cells_.size();
  const auto Di = static_cast<Eigen::Index>(D), mi = static_cast<Eigen::Index>(m);
  if (wanted.size() != m)
    throw std::invalid_argument("batched risk: " + std::to_string(wanted.size()) + " flags for " + std::to_string(m) +
                                " cells");
  if (std::none_of(wanted.begin(), wanted.end(), [](bool b) { return b; }))
    throw std::invalid_argument("batched risk: no cell to evaluate");
  if (w.rows() != 2 * Di || w.cols() != mi)
    throw std::invalid_argument("batched risk: weights are " + std::to_string(w.rows()) + " x " +
                                std::to_string(w.cols()) + ", expected 2D x cells = " + std::to_string(2 * D) + " x " +
                                std::to_string(m));

  // Stacked weights [k_1 … k_m v_1 … v_m].
  Eigen::MatrixXd stacked(Di, 2 * mi);
  stacked.leftCols(mi) = w.topRows(Di);
  stacked.rightCols(mi) = w.bottomRows(Di);

  const std::size_t Lmax = data_.max_length(), stride = Lmax * D;
  const auto block = std::max<std::size_t>(
      1, static_cast<std::size_t>(block_bytes_ / (static_cast<double>(stride) * sizeof(double))));
  const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(D));

  batch_partial init;
  init.gradient = Eigen::MatrixXd::Zero(Di, 2 * mi);
  init.loss.assign(m, 0.0);
  const auto total = model::chunked_reduce(
      data_.size(), chunk_size(data_.size()), 1, init,
      [&](std::size_t begin, std::size_t end, batch_partial& acc) {
        thread_local block_scratch s;
        s.chi.resize(Lmax), s.z.resize(Lmax), s.sigma.resize(Lmax), s.jt.resize(Lmax);
        const auto run = [&](const auto* tokens) {
          for (std::size_t first = begin; first < end; first += block) {
            const std::size_t last = std::min(end, first + block), rows = (last - first) * Lmax;
            const auto ri = static_cast<Eigen::Index>(rows);
            const double* x = block_as_double(tokens + first * stride, rows * D, s.tokens, rows, D);
            // P = X [k_1 … k_m v_1 … v_m]: X is rows × D row-major, the stacked weights D × 2m
            // column-major, i.e. 2m × D row-major and transposed.
            s.projections.resize(ri, 2 * mi);
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(rows), static_cast<int>(2 * m),
                        static_cast<int>(D), 1.0, x, static_cast<int>(D), stacked.data(), static_cast<int>(D), 0.0,
                        s.projections.data(), static_cast<int>(2 * m));
            s.coefficients.setZero(ri, 2 * mi);
            for (std::size_t mu = first; mu < last; ++mu) {
              const std::size_t L = data_.length(mu), row0 = (mu - first) * Lmax;
              for (std::size_t j = 0; j < m; ++j) {
                if (!wanted[j]) continue; // its coefficients stay zero
                const auto ji = static_cast<Eigen::Index>(j);
                for (std::size_t l = 0; l < L; ++l) {
                  const auto r = static_cast<Eigen::Index>(row0 + l);
                  s.chi[l] = s.projections(r, ji) * inv_sqrt_d;
                  s.z[l] = s.projections(r, mi + ji) * inv_sqrt_d;
                }
                const std::span<const double> chi(s.chi.data(), L), z(s.z.data(), L);
                const std::span<double> sigma(s.sigma.data(), L), jt(s.jt.data(), L);
                activations_[j]->vector_jacobian(chi, z, sigma, jt); // jt = Jᵀz = ∂f/∂χ
                double f = 0;
                for (std::size_t l = 0; l < L; ++l) f += sigma[l] * z[l];
                const double residual = f - data_.label(mu);
                acc.loss[j] += 0.5 * residual * residual;
                // ∂(½r²)/∂k = r Σ_l (Jᵀz)_l x_l/√D,  ∂(½r²)/∂v = r Σ_l σ_l x_l/√D.
                const double scale = residual * inv_sqrt_d;
                for (std::size_t l = 0; l < L; ++l) {
                  const auto r = static_cast<Eigen::Index>(row0 + l);
                  s.coefficients(r, ji) = scale * jt[l];
                  s.coefficients(r, mi + ji) = scale * sigma[l];
                }
              }
            }
            // G += Xᵀ A with G D × 2m column-major, i.e. Gᵀ += Aᵀ X in row-major terms.
            cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(2 * m), static_cast<int>(D),
                        static_cast<int>(rows), 1.0, s.coefficients.data(), static_cast<int>(2 * m), x,
                        static_cast<int>(D), 1.0, acc.gradient.data(), static_cast<int>(D));
          }
        };
        if (data_.tokens_f64() != nullptr)
          run(data_.tokens_f64());
        else
          run(data_.tokens_f32());
      });

  gradient.setZero(2 * Di, mi);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<erm::loss_value> out(m, erm::loss_value{nan, nan});
  for (std::size_t j = 0; j < m; ++j) {
    if (!wanted[j]) continue;
    const auto ji = static_cast<Eigen::Index>(j);
    const auto& cell = cells_[j];
    gradient.col(ji).head(Di) = total.gradient.col(ji) + cell.r_k * w.col(ji).head(Di);
    gradient.col(ji).tail(Di) = total.gradient.col(mi + ji) + cell.r_v * w.col(ji).tail(Di);
    out[j].loss = total.loss[j];
    out[j].objective = total.loss[j] + 0.5 * cell.r_k * w.col(ji).head(Di).squaredNorm() +
                       0.5 * cell.r_v * w.col(ji).tail(Di).squaredNorm();
  }
  return out;
}

} // namespace bench_batch

namespace {
using clock_type = std::chrono::steady_clock;
double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
template <class T>
double read_pass(const T* x, std::size_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (std::size_t i = 0; i + 3 < n; i += 4) {
    s0 += static_cast<double>(x[i]);
    s1 += static_cast<double>(x[i + 1]);
    s2 += static_cast<double>(x[i + 2]);
    s3 += static_cast<double>(x[i + 3]);
  }
  return s0 + s1 + s2 + s3;
}
} // namespace

int main(int argc, char** argv) {
  using namespace slr;
  const std::size_t D = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 3536;
  const double alpha = argc > 2 ? std::strtod(argv[2], nullptr) : 8.0;
  const auto storage = erm::parse_precision(argc > 3 ? argv[3] : "f64");
  const double block_bytes = argc > 4 ? std::strtod(argv[4], nullptr) : 1024.0 * 1024.0;
  const auto N = static_cast<std::size_t>(alpha * static_cast<double>(D));
  const auto [cpu, flags] = bench::cpu_model_and_flags();
  std::printf("batched ERM risk: D = %zu, N = %zu, L = 3, spiked nu = 1, %s tokens, blocks of %.0f bytes, 1 thread\n"
              "cpu: %s\n",
              D, N, std::string(erm::precision_name(storage)).c_str(), block_bytes, cpu.c_str());
  (void)flags;
  model::problem problem;
  const auto teacher = erm::teacher::draw(D, 1);
  const auto data =
      erm::sequence_data::generate(problem, teacher, N, 1, model::stream_purpose::training_data, storage, 2);

  std::vector<bench_batch::risk_cell> cells;
  for (const auto kind : {model::activation_kind::softmax, model::activation_kind::linear, model::activation_kind::erf})
    for (const double r : {0.01, 0.1, 1.0}) {
      bench_batch::risk_cell cell;
      cell.activation.kind = kind;
      cell.r_k = cell.r_v = r;
      cells.push_back(cell);
    }
  const std::size_t C = cells.size();
  const auto Di = static_cast<Eigen::Index>(D);
  Eigen::MatrixXd w(2 * Di, static_cast<Eigen::Index>(C)), gradients;
  std::vector<std::unique_ptr<erm::empirical_risk>> singles;
  for (std::size_t c = 0; c < C; ++c) {
    w.col(static_cast<Eigen::Index>(c)) = erm::initial_weights(teacher, erm::initialisation::informed, 0.1, 1 + c);
    singles.push_back(std::make_unique<erm::empirical_risk>(data, cells[c].activation, cells[c].r_k, cells[c].r_v, 1));
  }
  const bench_batch::batched_risk batch(data, cells, block_bytes);
  const std::vector<bool> all(C, true);

  // Correctness first: each cell against the single-cell risk.
  const auto values = batch.evaluate(w, all, gradients);
  double worst_value = 0, worst_gradient = 0;
  Eigen::VectorXd g;
  for (std::size_t c = 0; c < C; ++c) {
    const Eigen::VectorXd wc = w.col(static_cast<Eigen::Index>(c));
    const auto single = singles[c]->evaluate(wc, g);
    worst_value = std::max(worst_value, std::abs(values[c].objective - single.objective) / std::abs(single.objective));
    worst_gradient = std::max(worst_gradient, (gradients.col(static_cast<Eigen::Index>(c)) - g).cwiseAbs().maxCoeff() /
                                                  g.cwiseAbs().maxCoeff());
  }
  std::printf("agreement with the single-cell risk: objective %.1e relative, gradient %.1e of its scale\n", worst_value,
              worst_gradient);
  if (!(worst_value < 1e-12 && worst_gradient < 1e-11)) {
    std::fprintf(stderr, "the batched risk disagrees with the single-cell risk\n");
    return 1;
  }

  double sink = 0;
  std::vector<double> reads, separate, together;
  const std::size_t entries = N * 3 * D;
  for (int r = 0; r < 5; ++r) {
    auto t0 = clock_type::now();
    sink += storage == erm::precision::f64 ? read_pass(data.tokens_f64(), entries) : read_pass(data.tokens_f32(), entries);
    reads.push_back(seconds_since(t0));
    t0 = clock_type::now();
    for (std::size_t c = 0; c < C; ++c) {
      const Eigen::VectorXd wc = w.col(static_cast<Eigen::Index>(c));
      sink += singles[c]->evaluate(wc, g).objective;
    }
    separate.push_back(seconds_since(t0));
    t0 = clock_type::now();
    sink += batch.evaluate(w, all, gradients)[0].objective;
    together.push_back(seconds_since(t0));
  }
  const double read_s = median(reads), separate_s = median(separate), together_s = median(together);
  // Arithmetic of one evaluation of the 9 cells, the same for both: per token entry and cell two
  // multiply-adds for the projections and two for the gradient.
  const double flops = 8.0 * static_cast<double>(entries) * static_cast<double>(C);
  std::printf("one read pass over the tokens (median of 5)    %8.1f ms\n", read_s * 1e3);
  std::printf("9 single-cell evaluations (median of 5)        %8.1f ms  %5.2f read passes  %5.1f GFlop/s\n",
              separate_s * 1e3, separate_s / read_s, flops / separate_s / 1e9);
  std::printf("one batched evaluation of 9 cells (median of 5) %7.1f ms  %5.2f read passes  %5.1f GFlop/s\n",
              together_s * 1e3, together_s / read_s, flops / together_s / 1e9);
  std::printf("summary: D=%zu N=%zu %s block=%.0f  batched/single %.2f\n", D, N,
              std::string(erm::precision_name(storage)).c_str(), block_bytes, together_s / separate_s);
  return sink == 12345.678 ? 2 : 0; // keeps the passes from being optimised away
}
