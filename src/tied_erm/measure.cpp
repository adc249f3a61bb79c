#include "slr/tied_erm/measure.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <Eigen/Eigenvalues>

#include "kernels.hpp"
#include "slr/tied_erm/risk.hpp"

namespace slr::tied_erm {

namespace {
void require(bool ok, const char* name, const std::string& reason) {
  if (!ok) throw std::invalid_argument(std::string(name) + ": " + reason);
}

struct mean_se {
  double mean = 0, se = 0;
};
mean_se mean_and_standard_error(const Eigen::VectorXd& v) {
  const auto n = static_cast<double>(v.size());
  const double mean = v.mean();
  const double var = (v.array() - mean).square().sum() / (n - 1);
  return {mean, std::sqrt(var / n)};
}

std::string megabytes(double bytes) { return std::to_string(static_cast<long long>(std::ceil(bytes / 1e6))) + " MB"; }
} // namespace

tied::problem attention_form(tied::problem problem) {
  problem.labels = tied::label_form::seq2label;
  return problem;
}

std::size_t training_size(double alpha, std::size_t d) noexcept {
  const double n = std::round(alpha * static_cast<double>(d) * static_cast<double>(d));
  return n < 1 ? 1 : static_cast<std::size_t>(n);
}

void erm_settings::validate() const {
  require(d >= 2, "d", "must be >= 2");
  require(n_test >= 2, "n_test", "must be >= 2 (standard errors need two sequences)");
  require(!std::isnan(memory_limit_bytes) && memory_limit_bytes > 0, "memory_limit_bytes", "must be > 0");
  solver.validate();
}

double memory_estimate_bytes(const tied::problem& problem, const erm_settings& settings) {
  problem.validate();
  settings.validate();
  const std::size_t d = settings.d, n = training_size(problem.alpha, d);
  const auto dd = static_cast<double>(d);
  const auto T = static_cast<double>(problem.T);
  double bytes = dataset_bytes(n, problem.T, d, problem.labels) + dataset_bytes(settings.n_test, problem.T, d);
  // Block scratch of the risk (tokens·S and the signed rows), for the training and the test risk.
  const auto block = static_cast<double>(std::min(n, detail::block_sequences));
  bytes += 8.0 * 2 * block * T * dd * 2;
  bytes += 8.0 * 2 * static_cast<double>(settings.n_test); // per-sequence test errors
  // Optimiser state: L-BFGS keeps 2m correction vectors plus ~8 working vectors; the APG ~10 d×d
  // matrices; every path holds ~10 d×d matrices (S, gradient, eigen-decompositions).
  double variables = dd * dd;
  if (problem.param == tied::parametrisation::factorised) variables = dd * static_cast<double>(student_width(problem.k, d));
  if (problem.param != tied::parametrisation::psd_nuclear)
    bytes += 8.0 * variables * (2.0 * static_cast<double>(settings.solver.lbfgs_memory) + 8);
  bytes += 8.0 * dd * dd * 20;
  return bytes;
}

measurements measure(const tied::problem& problem, const teacher& teacher, const dataset& train, const dataset& test,
                     const solution& solution) {
  const std::size_t d = teacher.dimension();
  require(train.dimension() == d && test.dimension() == d, "dataset", "dimension differs from the teacher's");
  require(static_cast<std::size_t>(solution.S.rows()) == d && static_cast<std::size_t>(solution.S.cols()) == d, "S",
          "must be d×d");
  require(test.size() >= 2, "test", "needs at least two sequences");
  const Eigen::MatrixXd& S = solution.S;
  const auto dd = static_cast<double>(d);
  measurements out;
  out.n_train = train.size();
  out.n_test = test.size();
  out.optimiser = solution.report;

  // The test errors are those of the attention matrix whatever the training labels (the
  // quantity the theory predicts for both forms): the test data are sequence-to-label.
  empirical_risk test_risk(attention_form(problem), test);
  Eigen::VectorXd noisy, clean;
  test_risk.sequence_errors(S, noisy, clean);
  const auto c = mean_and_standard_error(clean), y = mean_and_standard_error(noisy);
  out.test_clean = c.mean;
  out.test_clean_se = c.se;
  out.test_noisy = y.mean;
  out.test_noisy_se = y.se;

  empirical_risk train_risk(problem, train);
  const double loss = train_risk.loss(S);
  out.train_loss = loss / static_cast<double>(train.size());
  out.objective_per_d2 = (loss + penalty(problem, S)) / (dd * dd);

  out.q = S.squaredNorm() / dd;
  out.m = (S.array() * teacher.S.array()).sum() / dd;
  out.target_second_moment = teacher.second_moment();
  out.mse_S = (S - teacher.S).squaredNorm() / dd;
  out.trace_per_d = S.trace() / dd;

  out.eigenvalues = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(S, Eigen::EigenvaluesOnly).eigenvalues();
  const double top = out.eigenvalues.cwiseAbs().maxCoeff();
  const auto fraction_above = [&](double rel) {
    if (top == 0) return 0.0;
    return static_cast<double>((out.eigenvalues.array().abs() > rel * top).count()) / dd;
  };
  out.rank_rel_1e3 = fraction_above(1e-3);
  out.rank_rel_1e2 = fraction_above(1e-2);
  if (problem.param != tied::parametrisation::direct && top > 0) out.kkt_residual = kkt_residual(problem, train_risk, S);
  return out;
}

measurements run_erm(const tied::problem& problem, const erm_settings& settings, Eigen::MatrixXd* S_hat) {
  const double need = memory_estimate_bytes(problem, settings);
  const std::size_t n = training_size(problem.alpha, settings.d);
  if (need > settings.memory_limit_bytes)
    throw std::invalid_argument("memory_limit_bytes: the run needs about " + megabytes(need) + " (d = " +
                                std::to_string(settings.d) + ", n = " + std::to_string(n) + ", n_test = " +
                                std::to_string(settings.n_test) + "), above the limit of " +
                                megabytes(settings.memory_limit_bytes));
  const auto t = teacher::draw(settings.d, problem.k0, settings.seed);
  const auto train = dataset::generate(problem, t, n, settings.seed, model::stream_purpose::training_data);
  const auto sol = solve(problem, train, settings.solver, settings.seed);
  const auto test =
      dataset::generate(attention_form(problem), t, settings.n_test, settings.seed, model::stream_purpose::test_data);
  auto out = measure(problem, t, train, test, sol);
  if (S_hat != nullptr) *S_hat = sol.S;
  return out;
}

} // namespace slr::tied_erm
