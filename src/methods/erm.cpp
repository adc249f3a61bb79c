// Method "erm": empirical risk minimisation at finite D (docs/theory.md §4, simulation side):
// draw the teacher and N = αD training sequences, train f(X) = σ(Xk/√D)ᵀXv/√D with L-BFGS or
// gradient flow from an informed or random start, and measure the 7 order parameters, the
// training loss, and the test risk on fresh sequences (plus the population formula of §2 at
// the learned overlaps, which is the exact test risk up to its Monte Carlo error).
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters.hpp"
#include "slr/erm/data.hpp"
#include "slr/erm/loss.hpp"
#include "slr/erm/trainer.hpp"
#include "slr/model/number_text.hpp"
#include "slr/theory/population.hpp"

namespace slr::methods::detail {
namespace {
constexpr std::size_t population_samples = 100'000; // MC samples of the population formula
constexpr std::size_t default_trajectory_points = 30;

std::size_t dimension_of(const grid::point& p) { return static_cast<std::size_t>(option_number(p, "D")); }

std::size_t sequences_of(const grid::point& p) {
  return std::max<std::size_t>(1, static_cast<std::size_t>(std::llround(p.alpha * static_cast<double>(dimension_of(p)))));
}

erm::precision precision_of(const grid::point& p) { return erm::parse_precision(option_text(p, "precision")); }

double estimate_memory_bytes(const grid::point& p) {
  const double D = static_cast<double>(dimension_of(p));
  const double L = static_cast<double>(p.problem.lengths.max_length());
  const double per_entry = static_cast<double>(erm::bytes_per_token_entry(precision_of(p)));
  const double tokens = erm::token_bytes(sequences_of(p), p.problem.lengths.max_length(), dimension_of(p), precision_of(p));
  const double test_block = std::max(64e6, 64.0 * L * D * per_entry) * 1.05;
  const double vectors = (2.0 * 10 + 16) * 2 * D * 8; // L-BFGS pairs, gradient copies, teacher
  const double chunk_buffers = 64.0 * 2 * D * 8;     // per-chunk gradient sums
  const double per_sequence = 16.0 * static_cast<double>(sequences_of(p));
  const double population = static_cast<double>(population_samples) * (L * 40.0 + 32.0);
  constexpr double base = 32e6; // binary, libraries, allocator slack
  return tokens + test_block + vectors + chunk_buffers + per_sequence + population + base;
}

std::vector<double> parse_times(const std::string& text) {
  std::vector<double> times;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    if (item.find_first_not_of(" \t") == std::string::npos) continue;
    const auto value = model::parse_number(item);
    if (!value) throw std::invalid_argument("option 'trajectory-times': '" + item + "' is not a number");
    times.push_back(*value);
  }
  return times;
}

// Recording times of gradient flow: the given list (or 0 and log-spaced times up to the
// horizon), always ending at the horizon.
std::vector<double> recording_times(const grid::point& p) {
  const double horizon = option_number(p, "horizon");
  auto times = parse_times(option_text(p, "trajectory-times"));
  if (times.empty()) {
    times.push_back(0.0);
    const double first = std::min(1e-2, horizon);
    for (std::size_t i = 0; i < default_trajectory_points; ++i)
      times.push_back(first * std::pow(horizon / first, static_cast<double>(i) / (default_trajectory_points - 1)));
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  for (double t : times) {
    if (!(t >= 0) || !std::isfinite(t))
      throw std::invalid_argument("option 'trajectory-times': times must be finite and >= 0");
    if (t > horizon)
      throw std::invalid_argument("option 'trajectory-times': " + grid::format_number(t) + " exceeds the horizon " +
                                  grid::format_number(horizon));
  }
  if (times.empty() || times.back() < horizon) times.push_back(horizon);
  times.back() = horizon;
  return times;
}

// Expected loss + gradient evaluations of one training (the cost model's count), fitted to
// trainings of spiked ν = 1, L = 3, informed start, tol 1e-6:
//   L-BFGS: log10 E quadratic in x_k = log10 r_k, x_v = log10 r_v (clamped to [−2.5, 0.5]) and
//     a = log10 α (clamped to [−0.3, 0.9], the fitted range), with the terms 1, x_k, x_v, x_k x_v,
//     a, a x_k, a x_v, a², least squares over the cell means of tests/bench/erm_cost_calibration.toml
//     (3 × 3 r grid × α = 0.5, 1, 2, 4, 8 × 2 seeds at √(ND) = 1000) and of the unbalanced half of
//     tests/bench/balance_ridges.toml (α = 0.5, 2 × 4 seeds): 43 of 45 softmax and 42 of 45 linear
//     cells within 2× (worst 2.1× and 3.4×; the earlier model without α: 29 and 26, worst 3.8× and 20×);
//     logs/erm_cost_calibration.csv. A weak penalty on k is what costs (flat directions of the
//     k-scale with curvature ~ r_k), and for linear attention more so at α ≈ 2 (E up to 7800).
//     Larger sizes: the factor below (the size term of the cost), checked at the full size of
//     jobs/fig3_erm.toml on its most expensive cell (jobs/figures/README.md).
//     Single trainings scatter 0.3–2× around these means, so the model is for job totals.
//   L-BFGS with balance-ridges = 1 where r_k < r_v: E / (r_v/r_k)^0.26 (the geometric mean of the
//     measured ratios: 1.6× at r_v/r_k = 10, 3.3× at 100; docs/theory.md §8).
//   Gradient flow, Heun: the step is held at the stability limit of the stiffest data direction
//     (the error tolerance barely matters: 1e-3 and 1e-5 take 0.93× and 1.3× the steps of 1e-4),
//     so evaluations grow with the horizon: ~5.3 per unit time for softmax, ~21 r^-0.25 for linear
//     (D = 1250, α = 4, horizon 100: softmax 531 / 523, linear 3748 / 2094 at r = 0.1 / 1).
//   Gradient flow, RKC (default): the early transient is resolved with 2-stage steps, later steps
//     grow with √ρ stages each; power-method evaluations included, ~3.7 per unit time for
//     softmax and ~7.9 r^-0.155 for linear over a horizon of 100 (D = 1000, α = 4: softmax 385 /
//     358, linear 1131 / 792 at r = 0.1 / 1).
// Other activations use the softmax numbers.
double expected_evaluations(const grid::point& p) {
  const bool linear = p.problem.activation.kind == model::activation_kind::linear;
  const auto clamped_log = [](double r) { return std::clamp(std::log10(std::max(r, 1e-12)), -2.5, 0.5); };
  const double x_k = clamped_log(p.r_k), x_v = clamped_log(p.r_v);
  if (option_text(p, "optimizer") == "gradient-flow") {
    const double r = std::pow(10.0, 0.5 * (x_k + x_v));
    const bool rkc = option_text(p, "integrator") == "rkc";
    const double per_time = rkc ? (linear ? 7.9 * std::pow(r, -0.155) : 3.7) : (linear ? 21.0 * std::pow(r, -0.25) : 5.3);
    return 10 + per_time * option_number(p, "horizon");
  }
  const double a = std::clamp(std::log10(p.alpha), -0.3, 0.9);
  static constexpr std::array<double, 8> softmax_fit{1.664, -0.585, -0.405, -0.156, 0.206, -0.146, 0.117, -0.885};
  static constexpr std::array<double, 8> linear_fit{2.212, -0.849, -0.223, -0.250, 0.889, 0.187, -0.108, -2.059};
  const auto& c = linear ? linear_fit : softmax_fit;
  double log_e = c[0] + c[1] * x_k + c[2] * x_v + c[3] * x_k * x_v + c[4] * a + c[5] * a * x_k + c[6] * a * x_v +
                 c[7] * a * a;
  if (option_text(p, "balance-ridges") == "1" && p.r_k > 0 && p.r_k < p.r_v)
    log_e -= 0.26 * std::min(3.0, std::log10(p.r_v / p.r_k));
  // Size: above √(ND) = 1000 the weak-k cells need more evaluations, E ∝ (√(ND)/1000)^γ with
  // γ = 0.3 (−x_k)(1 + x_v/4) ≥ 0: from √(ND) = 1000 to 2500 the corner means grow 2.3× (softmax)
  // and 1.7× (linear) at r_k = 0.01, r_v = 1 (measured γ 0.9, 0.6), 1.4× and 1.1× at r_k = r_v = 0.01, and
  // not at r_k = 1; at 10⁴ a linear r_k = 0.01, r_v = 1, α = 0.5 training ran into the 10⁴ cap
  // (≥ 2.4× its mean at 1000). No reduction below √(ND) = 1000 (not measured there).
  const double size = std::max(0.0, std::log10(std::sqrt(static_cast<double>(sequences_of(p)) *
                                                          static_cast<double>(dimension_of(p))) / 1000.0));
  log_e += std::max(0.0, 0.3 * (-x_k) * (1.0 + x_v / 4.0)) * size;
  return std::min(std::pow(10.0, log_e), 1.05 * option_number(p, "max-iter") + 2);
}

nlohmann::json overlaps_json(const model::order_parameters& op) {
  return {{"m_kk", op.m_kk}, {"m_kv", op.m_kv}, {"m_vk", op.m_vk}, {"m_vv", op.m_vv},
          {"q_kk", op.q_kk}, {"q_kv", op.q_kv}, {"q_vv", op.q_vv}};
}

// Bad start inputs are input errors (exit 2, or a job-file error naming the entry), found
// before anything is scheduled rather than as a failed point.
void validate_erm(const grid::point& p) {
  const auto kind = erm::parse_initialisation(option_text(p, "init"));
  const auto& weights = option_text(p, "init-weights");
  const auto& overlaps = option_text(p, "init-overlaps");
  if (kind == erm::initialisation::given) {
    if (weights.empty()) throw std::invalid_argument("option 'init-weights': --init given needs a weights file");
    try {
      (void)erm::read_weights_file(weights, dimension_of(p)); // readable, numbers, 2D of them
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("option 'init-weights': ") + e.what());
    }
  } else if (!weights.empty()) {
    throw std::invalid_argument("option 'init-weights' is only used with init = given");
  }
  if (kind == erm::initialisation::overlaps) {
    if (dimension_of(p) < 4) throw std::invalid_argument("option 'init': overlaps needs D >= 4");
    if (overlaps.empty())
      throw std::invalid_argument("option 'init-overlaps': --init overlaps needs m_kk,m_kv,m_vk,m_vv,q_kk,q_kv,q_vv");
    model::order_parameters start;
    try {
      start = erm::parse_overlaps(overlaps);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("option 'init-overlaps': ") + e.what());
    }
    if (!start.is_admissible(1e-10))
      throw std::invalid_argument("option 'init-overlaps': Q - M^T M is not positive semi-definite");
  } else if (!overlaps.empty()) {
    throw std::invalid_argument("option 'init-overlaps' is only used with init = overlaps");
  }
}

grid::result_record solve_erm(const grid::point& p, const run_context& context) {
  const auto start = std::chrono::steady_clock::now();
  const std::size_t D = dimension_of(p);
  if (D < 2) throw std::invalid_argument("option 'D': must be >= 2");
  if (!(p.alpha > 0) || !std::isfinite(p.alpha)) throw std::invalid_argument("alpha must be finite and > 0");
  const std::size_t N = sequences_of(p);
  const auto storage = precision_of(p);
  const double needed = estimate_memory_bytes(p);
  const double available = erm::available_memory_bytes();
  if (needed > available)
    throw std::invalid_argument("erm: D = " + std::to_string(D) + ", N = " + std::to_string(N) + " needs about " +
                                grid::format_number(std::round(needed / 1e6)) + " MB but only " +
                                grid::format_number(std::round(available / 1e6)) +
                                " MB are available; reduce D or alpha, or use --precision f32");
  const unsigned threads = context.threads;

  const auto teacher = erm::teacher::draw(D, p.seed);
  const auto data = erm::sequence_data::generate(p.problem, teacher, N, p.seed, model::stream_purpose::training_data,
                                                 storage, threads);
  const erm::empirical_risk risk(data, p.problem.activation, p.r_k, p.r_v, threads);

  erm::trainer_settings settings;
  settings.method = erm::parse_optimizer(option_text(p, "optimizer"));
  settings.tolerance = option_number(p, "tol");
  settings.max_iterations = static_cast<std::size_t>(option_number(p, "max-iter"));
  settings.lbfgs_memory = static_cast<std::size_t>(option_number(p, "lbfgs-memory"));
  settings.balance_ridges = option_text(p, "balance-ridges") == "1";
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  settings.wall_time_limit_s = context.wall_time_limit_s - elapsed;
  if (settings.method == erm::optimizer::gradient_flow) {
    settings.record_times = recording_times(p);
    settings.integrator = erm::parse_flow_integrator(option_text(p, "integrator"));
  }
  const auto start_kind = erm::parse_initialisation(option_text(p, "init"));
  std::string start_description = option_text(p, "init");
  Eigen::VectorXd w0;
  const auto warm_overlaps =
      context.warm_start != nullptr ? context.warm_start->order_parameters() : std::optional<model::order_parameters>{};
  // (D ≥ 4: two directions orthogonal to k*, v* are needed; tiny test dimensions use the init.)
  if (warm_overlaps && warm_overlaps->is_admissible(1e-8) && D >= 4) {
    // α-continuation: start from the overlaps the previous point of the chain reached (its data
    // are independent of ours, so its weights' noise directions carry nothing; its overlaps do).
    w0 = erm::weights_with_overlaps(teacher, *warm_overlaps, p.seed);
    start_description = "warm-start";
  } else if (start_kind == erm::initialisation::given) {
    w0 = erm::read_weights_file(option_text(p, "init-weights"), D); // presence checked by validate_erm
  } else if (start_kind == erm::initialisation::overlaps) {
    w0 = erm::weights_with_overlaps(teacher, erm::parse_overlaps(option_text(p, "init-overlaps")), p.seed);
  } else {
    w0 = erm::initial_weights(teacher, start_kind, option_number(p, "init-noise"), p.seed);
  }
  const auto initial_overlaps =
      erm::measure_order_parameters(teacher, w0.head(static_cast<Eigen::Index>(D)), w0.tail(static_cast<Eigen::Index>(D)));
  const auto trained = erm::train(risk, teacher, w0, settings);

  const auto Di = static_cast<Eigen::Index>(D);
  const auto overlaps = erm::measure_order_parameters(teacher, trained.w.head(Di), trained.w.tail(Di));
  grid::result_record r;
  r.set_order_parameters(overlaps);
  r.set("train_loss", trained.train_loss);
  r.set("train_loss_regularised", trained.train_loss_regularised);
  r.set("iterations", static_cast<double>(trained.iterations));
  r.set("D", static_cast<double>(D));
  r.set("N", static_cast<double>(N));
  r.set("grad_evals", static_cast<double>(trained.gradient_evaluations));
  r.set("grad_time_s", trained.median_evaluation_s);
  r.set("rel_grad", trained.rel_grad);

  nlohmann::json extra;
  extra["stopped_by"] = std::string(erm::stop_reason_name(trained.stopped));
  extra["init"] = start_description;
  extra["initial_order_parameters"] = overlaps_json(initial_overlaps);
  if (!std::isfinite(trained.train_loss_regularised)) {
    r.status = grid::status::diverged;
    r.message = "the training loss is not finite";
  } else {
    switch (trained.stopped) {
    case erm::stop_reason::tolerance:
    case erm::stop_reason::horizon: r.status = grid::status::ok; break;
    case erm::stop_reason::iteration_cap:
      r.status = grid::status::not_converged;
      r.message = "iteration cap reached before rel_grad <= tol";
      break;
    case erm::stop_reason::line_search:
      r.status = grid::status::not_converged;
      r.message = trained.message;
      break;
    case erm::stop_reason::timeout:
      r.status = grid::status::timeout;
      r.message = "wall-time limit reached; results are at the best point so far";
      break;
    }
    // Measurements at the final point (also after a timeout: they describe what was reached).
    const auto test = erm::fresh_test_risk(p.problem, teacher, trained.w,
                                           static_cast<std::size_t>(option_number(p, "test-samples")), p.seed, storage,
                                           threads);
    r.set("test_risk", test.mean);
    r.set("test_risk_stderr", test.stderr);
    r.set("risk", test.mean);
    r.set("risk_stderr", test.stderr);
    if (overlaps.is_admissible(1e-8)) {
      const auto population = theory::population_risk(
          p.problem, overlaps, {population_samples, model::derive_seed(p.seed, model::stable_hash("erm-population")), threads});
      extra["population_risk"] = population.value;
      extra["population_risk_stderr"] = population.stderr;
    }
  }
  if (settings.method == erm::optimizer::gradient_flow) {
    extra["flow_time"] = trained.flow_time;
    if (option_text(p, "trajectory") == "1") {
      nlohmann::json trajectory = nlohmann::json::array();
      for (const auto& point : trained.trajectory)
        trajectory.push_back({{"t", point.time},
                              {"order_parameters", overlaps_json(point.overlaps)},
                              {"train_loss", point.train_loss},
                              {"train_loss_regularised", point.train_loss_regularised},
                              {"rel_grad", point.rel_grad}});
      extra["trajectory"] = std::move(trajectory);
    }
  }
  r.extra_json = extra.dump();
  r.set("peak_rss_mb", erm::peak_rss_mb());
  return r;
}
} // namespace

method_descriptor describe_erm() {
  method_descriptor m;
  m.name = "erm";
  m.summary = "empirical risk minimisation at finite D: trained order parameters, train loss, test risk";
  m.finite_alpha = true;
  using type = option_spec::value_type;
  m.options = {
      {"D", type::integer, "1000", "dimension D of the simulation", {}, 2, 1e9},
      {"init", type::choice, "informed",
       "start: informed (k = k* + eta g, v = v* + eta g), random (k, v = eta g), given (--init-weights) or overlaps "
       "(--init-overlaps); in an alpha-continuation chain every point after the first starts from the overlaps "
       "the previous point reached",
       {"informed", "random", "given", "overlaps"}},
      {"init-weights", type::text, "",
       "--init given: text file of 2D numbers, k then v (e.g. numpy.savetxt(f, numpy.concatenate([k, v])))",
       {}, -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(), true},
      {"init-overlaps", type::text, "",
       "--init overlaps: m_kk,m_kv,m_vk,m_vv,q_kk,q_kv,q_vv of the start (random weights with exactly these)",
       {}, -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(), true},
      {"init-noise", type::real, "0.1", "eta: noise of the informed start, or scale of the random start", {}, 0, 1e6},
      {"optimizer", type::choice, "lbfgs", "lbfgs (strong-Wolfe line search) or gradient-flow",
       {"lbfgs", "gradient-flow"}},
      {"tol", type::real, "1e-6", "stop when |grad F| / (alpha |w|) <= tol", {}, 1e-16, 1},
      {"max-iter", type::integer, "10000", "cap on L-BFGS iterations / gradient-flow steps", {}, 1, 1e9},
      {"lbfgs-memory", type::integer, "10", "L-BFGS: correction pairs kept (the curvature memory)", {}, 1, 1000,
       true},
      {"balance-ridges", type::choice, "0",
       "L-BFGS: 1 = where r_k < r_v, optimise over (k, v sqrt(r_v/r_k)), where both blocks carry the same ridge "
       "(~2x fewer evaluations at weak r_k, a different stationary point of the same F), 0 = over (k, v)",
       {"1", "0"}, -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(), true},
      {"test-samples", type::integer, "10000", "fresh test sequences for the test risk", {}, 2, 1e9},
      {"precision", type::choice, "f64", "token storage: f64, or f32 (half the memory; arithmetic in double)",
       {"f64", "f32"}},
      {"horizon", type::real, "100", "gradient flow: final time (dw/dt = -grad F / alpha)", {}, 1e-9, 1e9},
      {"trajectory-times", type::text, "",
       "gradient flow: comma-separated recording times (default: 0 and 30 log-spaced times up to the horizon)", {}},
      {"trajectory", type::choice, "0", "1: put the gradient-flow trajectory into the output", {"0", "1"}},
      {"integrator", type::choice, "rkc",
       "gradient flow: rkc (Runge-Kutta-Chebyshev, stable for stiff data directions at ~sqrt of the steps) or heun "
       "(explicit, step held at 2/rho)",
       {"rkc", "heun"}, -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(), true},
  };
  {
    const std::string finite = "status not diverged";
    const std::string flow = "optimizer = gradient-flow";
    m.outputs = order_parameter_outputs("the trained weights, measured against the drawn teacher");
    m.outputs.insert(m.outputs.end(), {
        {.name = "train_loss", .meaning = "training loss sum_mu (y_mu - f(X_mu))^2 / (2N) at the trained weights"},
        {.name = "train_loss_regularised",
         .meaning = "the ERM objective per sample F/N = train_loss + (r_k |k|^2 + r_v |v|^2)/(2N)"},
        {.name = "iterations", .meaning = "L-BFGS iterations or accepted gradient-flow steps"},
        {.name = "D", .meaning = "dimension D of the simulation (the option D again, as a result column)"},
        {.name = "N", .meaning = "training sequences N = round(alpha D)"},
        {.name = "grad_evals", .meaning = "evaluations of the loss and its gradient over the whole training"},
        {.name = "grad_time_s",
         .meaning = "median wall time of one loss + gradient evaluation over the N sequences (a measurement)",
         .unit = "s per evaluation"},
        {.name = "rel_grad",
         .meaning = "relative gradient |grad F| / (alpha |w|) at the end (the stopping quantity, compare with tol)"},
        {.name = "test_risk",
         .meaning = "test risk: mean of (y - f(X))^2 over test-samples fresh sequences (includes Delta^2)",
         .condition = finite},
        {.name = "test_risk_stderr", .meaning = "standard error of test_risk (sample s.d./sqrt(test-samples))",
         .condition = finite},
        {.name = "risk", .meaning = "the same as test_risk (the risk column every SLR method fills)",
         .condition = finite},
        {.name = "risk_stderr", .meaning = "the same as test_risk_stderr", .condition = finite},
        {.name = "stopped_by",
         .meaning = "what ended the training: tolerance (rel_grad <= tol), iteration_cap, horizon (gradient flow), "
                    "line_search (L-BFGS could not progress: the rounding floor) or timeout"},
        {.name = "init",
         .meaning = "the start used: informed, random, given, overlaps (the init option) or warm-start (the "
                    "overlaps of the previous point of an alpha-continuation chain); in the point's JSON it takes the "
                    "place of the option init"},
    });
    for (auto o : order_parameter_outputs("the initial weights")) {
      o.name.replace(0, std::string_view("order_parameters").size(), "initial_order_parameters");
      m.outputs.push_back(std::move(o));
    }
    m.outputs.insert(m.outputs.end(), {
        {.name = "population_risk",
         .meaning = "population risk E(M, Q) of docs/theory.md §2 at the trained order parameters (the exact test "
                    "risk of the trained weights up to its Monte Carlo error)",
         .condition = finite + " and the trained overlaps admissible"},
        {.name = "population_risk_stderr", .meaning = "Monte Carlo standard error of population_risk",
         .condition = finite + " and the trained overlaps admissible"},
        {.name = "flow_time",
         .meaning = "time reached by the gradient flow dw_hat/dt = -grad(F/N), w_hat = w/sqrt(D) (natural units)",
         .condition = flow},
        {.name = "trajectory",
         .meaning = "the flow recorded at the trajectory times: one object per time with t, order_parameters "
                    "(the seven), train_loss, train_loss_regularised, rel_grad",
         .condition = flow + " and trajectory = 1"},
        {.name = "peak_rss_mb",
         .meaning = "peak resident memory of the process so far (getrusage ru_maxrss; a measurement)",
         .unit = "MB (10^6 bytes)"},
    });
  }
  m.solve = solve_erm;
  m.validate = validate_erm;
  m.cost_seconds = [](const grid::point& p) {
    const double L = p.problem.lengths.mean();
    const double D = static_cast<double>(dimension_of(p));
    const double entries = static_cast<double>(sequences_of(p)) * L * D;
    const double test_entries = option_number(p, "test-samples") * L * D;
    // One loss + gradient streams the N·L·D token entries once (0.70 ns per entry in f64, 0.45 ns
    // in f32: bench_erm 2500 1 1 f64|f32 kernel); the rest of a point is drawing the training and
    // test tokens (~10 ns per entry, generation-bound) and evaluating the test set. Checked:
    // jobs/fig3_erm_small.toml plans 101 s, ran in 105 s CPU (1 worker); a full-size point
    // (softmax, α = 8, r = 1, D = 3536: 32 evaluations) plans 10.4 s, ran in 10.5 s CPU.
    const double per_evaluation = entries * (precision_of(p) == erm::precision::f32 ? 0.45e-9 : 0.70e-9);
    const double evaluations = expected_evaluations(p);
    // Plus the population risk at the trained overlaps (population_samples Monte Carlo samples:
    // ~0.12 s at L = 3, what a tiny point like jobs/smoke.toml's D = 200 mostly costs).
    const double population = 4e-7 * L * static_cast<double>(population_samples);
    return 1e-8 * (entries + test_entries) + evaluations * per_evaluation + population;
  };
  m.memory_bytes = [](const grid::point& p) {
    const double bytes = estimate_memory_bytes(p);
    constexpr auto largest = std::numeric_limits<std::size_t>::max();
    return bytes >= static_cast<double>(largest) ? largest : static_cast<std::size_t>(bytes);
  };
  return m;
}

} // namespace slr::methods::detail
