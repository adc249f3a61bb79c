#include "slr/tied/theory.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

namespace slr::tied {

std::string_view theory_status_name(theory_status s) noexcept {
  switch (s) {
  case theory_status::ok: return "ok";
  case theory_status::not_converged: return "not_converged";
  case theory_status::diverged: return "diverged";
  }
  return "diverged";
}

std::string_view hat_form_name(hat_form form) noexcept {
  switch (form) {
  case hat_form::stein: return "stein";
  case hat_form::hessian: return "hessian";
  case hat_form::automatic: return "automatic";
  }
  return "automatic";
}

hat_form parse_hat_form(std::string_view name) { return detail::parse_named("hats", all_hat_forms, hat_form_name, name); }

namespace {

void require(bool ok, const char* name, const char* reason) {
  if (!ok) throw std::invalid_argument(std::string(name) + ": " + reason);
}

using vec3 = Eigen::Vector3d;

vec3 as_vec(const overlaps& o) { return {o.q, o.m, o.V}; }
overlaps as_overlaps(const vec3& v) { return {v[0], v[1], v[2]}; }

bool admissible(const vec3& x, double Qt) {
  return x.allFinite() && x[0] > 0 && x[2] > 0 && x[1] * x[1] < Qt * x[0];
}

// One map evaluation x ↦ PRIOR(CHANNEL(x)) with everything the outputs need.
struct evaluation {
  vec3 x, Fx;
  channel_result channel;
  prior_result prior;
};

} // namespace

void theory_options::validate() const {
  require(log2_points_coarse == 0 || (log2_points_coarse >= 4 && log2_points_coarse <= 24), "log2_points_coarse",
          "must be 0 (no coarse phase) or in [4, 24]");
  require(log2_points >= 4 && log2_points <= 24, "log2_points", "must be in [4, 24]");
  require(std::isfinite(tolerance) && tolerance > 0, "tolerance", "must be finite and > 0");
  require(max_iterations >= 1, "max_iterations", "must be >= 1");
  require(anderson_depth >= 0 && anderson_depth <= 10, "anderson_depth", "must be in [0, 10]");
  require(std::isfinite(mixing) && mixing > 0 && mixing <= 1, "mixing", "must be in (0, 1]");
  require(std::isfinite(warm_radius) && warm_radius >= 0, "warm_radius", "must be finite and >= 0");
  require(std::isfinite(prox.tolerance) && prox.tolerance > 0, "prox.tolerance", "must be finite and > 0");
  require(prox.max_steps >= 1, "prox.max_steps", "must be >= 1");
  if (initial) {
    require(std::isfinite(initial->q) && initial->q > 0, "initial.q", "must be finite and > 0");
    require(std::isfinite(initial->m), "initial.m", "must be finite");
    require(std::isfinite(initial->V) && initial->V > 0, "initial.V", "must be finite and > 0");
  }
}

theory_result solve_theory(const problem& p, const theory_options& o) {
  const auto t0 = std::chrono::steady_clock::now();
  p.validate();
  o.validate();
  if (p.T > max_channel_T)
    throw std::invalid_argument("T: the RS channel is implemented for T <= " + std::to_string(max_channel_T));
  const double Q0 = p.target_second_moment(), Qt = Q0 + 0.5 * p.delta;
  vec3 x = o.initial ? as_vec(*o.initial) : vec3(0.5 * Q0, 0.4 * Q0, 1.0);
  require(admissible(x, Qt), "initial", "needs m^2 < (1 + k0 + Delta/2) q");

  theory_result out;
  std::size_t newton_steps = 0;
  const bool use_stein = o.hats == hat_form::stein || (o.hats == hat_form::automatic && p.delta > 0);
  const auto evaluate = [&](const qmc_normals& sample, const vec3& at, channel_memory* memory) {
    evaluation e;
    e.x = at;
    e.channel = channel_average(p, at[0], at[1], at[2], sample, o.prox, memory);
    newton_steps += e.channel.newton_steps;
    e.prior = prior_update(p, use_stein ? e.channel.stein : e.channel.hessian);
    e.Fx = {e.prior.q, e.prior.m, e.prior.V};
    return e;
  };

  std::optional<evaluation> last;
  theory_status status = theory_status::not_converged;
  std::string message;
  double residual = 0;
  const int phases[2] = {o.log2_points_coarse, o.log2_points};
  std::vector<qmc_normals> samples; // kept: the final one also serves the test errors
  samples.reserve(2);
  for (int phase = 0; phase < 2; ++phase) {
    if (phases[phase] == 0) continue;
    const auto& sample = samples.emplace_back(channel_sample(p, phases[phase], o.seed));
    // Anderson mixing (type II) in coordinates scaled by the phase's starting point, so q, m and
    // V (which differ by orders of magnitude at small α) weigh alike in the least-squares problem.
    const vec3 w = x.cwiseAbs().cwiseMax(1e-3).cwiseInverse();
    std::deque<vec3> xs, fs;
    channel_memory memory;
    // With warm starts, convergence is confirmed by one more evaluation at the same point in which
    // every channel point runs all 2^T starts again (so the reported hats rest on the global prox).
    bool confirming = false, use_memory = o.warm_starts;
    int failed_confirmations = 0, last_improvement = 0;
    double mixing = o.mixing;
    vec3 x_all = x; // state of the last evaluation in which every point ran all starts
    status = theory_status::not_converged;
    int it = 0;
    double best = std::numeric_limits<double>::infinity();
    for (; it < o.max_iterations; ++it) {
      std::optional<evaluation> e;
      // A rejected point (the channel or the prior refused it) is retried closer to the last good one.
      vec3 trial = x;
      for (int back = 0; back < 8 && !e; ++back) {
        // Warm starts only within warm_radius of the state of the last all-starts evaluation:
        // further away, minima that were unique there may have split (hysteresis otherwise).
        const double moved = (trial - x_all).cwiseAbs().cwiseQuotient(x_all.cwiseAbs().cwiseMax(1e-12)).maxCoeff();
        if (use_memory && (!memory.valid || !(moved <= (phase == 0 ? 10 : 1) * o.warm_radius))) {
          std::fill(memory.competing.begin(), memory.competing.end(), 1);
          x_all = trial;
        }
        try {
          e = evaluate(sample, trial, use_memory ? &memory : nullptr);
        } catch (const std::invalid_argument& err) {
          message = err.what();
          if (!last || xs.empty()) break;
          trial = last->x + 0.5 * (trial - last->x);
          if (!admissible(trial, Qt)) break;
        }
      }
      if (!e) {
        status = theory_status::diverged;
        message = "map evaluation failed: " + message;
        break;
      }
      x = trial;
      last = e;
      const vec3 f = e->Fx - x;
      residual = (w.cwiseProduct(f)).norm() / std::max(1e-300, (w.cwiseProduct(e->Fx)).norm());
      if (o.observer) o.observer(phase, it, as_overlaps(x), as_overlaps(e->Fx), residual);
      if (!std::isfinite(residual)) {
        status = theory_status::diverged;
        message = "non-finite residual";
        break;
      }
      if (residual < o.tolerance) {
        if (!use_memory || confirming || phase == 0) {
          status = theory_status::ok;
          ++it;
          break;
        }
        confirming = true;
        std::fill(memory.competing.begin(), memory.competing.end(), 1);
        continue;
      }
      if (confirming) {
        // The all-starts evaluation moved the map: some warm starts had stayed in a local minimum
        // that is no longer the global one. Those points are flagged now (their starts disagree);
        // the history belongs to the old map and is dropped. After two such failures warm starts
        // are abandoned for the phase.
        confirming = false;
        xs.clear();
        fs.clear();
        best = std::numeric_limits<double>::infinity();
        if (++failed_confirmations >= 2) use_memory = false;
      }
      if (residual > 1e3 * best) { // the extrapolation went astray: forget the history
        xs.clear();
        fs.clear();
      }
      if (residual < best) {
        best = residual;
        last_improvement = it;
      } else if (it - last_improvement >= 20) {
        // Stagnation (typical where prox minima compete and the sampled map is discontinuous at
        // the 1e-5 level): restart the history with a more strongly damped step.
        mixing = std::max(0.1, 0.5 * mixing);
        xs.clear();
        fs.clear();
        last_improvement = it;
      }
      xs.push_back(w.cwiseProduct(x));
      fs.push_back(w.cwiseProduct(f));
      while (static_cast<int>(xs.size()) > o.anderson_depth + 1) {
        xs.pop_front();
        fs.pop_front();
      }
      vec3 next_s = xs.back() + mixing * fs.back();
      const int mk = static_cast<int>(xs.size()) - 1;
      if (mk > 0) {
        Eigen::Matrix<double, 3, Eigen::Dynamic> dX(3, mk), dF(3, mk);
        for (int j = 0; j < mk; ++j) {
          dX.col(j) = xs[j + 1] - xs[j];
          dF.col(j) = fs[j + 1] - fs[j];
        }
        const Eigen::VectorXd gamma = dF.completeOrthogonalDecomposition().solve(fs.back());
        next_s -= (dX + mixing * dF) * gamma;
      }
      vec3 next = next_s.cwiseQuotient(w);
      if (!admissible(next, Qt)) {
        // Safeguard: half a plain step from the current point, history cleared.
        next = x + 0.5 * mixing * f;
        xs.clear();
        fs.clear();
        for (int k = 0; k < 30 && !admissible(next, Qt); ++k) next = x + 0.5 * (next - x);
        if (!admissible(next, Qt)) {
          status = theory_status::diverged;
          message = "no admissible step from the current state";
          break;
        }
      }
      x = next;
    }
    if (phase == 0)
      out.iterations_coarse = it;
    else
      out.iterations = it;
    if (status == theory_status::diverged) break;
    if (last) x = last->Fx.cwiseMax(vec3(1e-300, -1e300, 1e-300)); // continue from the map's output
    if (!admissible(x, Qt)) x = last->x;
  }

  out.status = status;
  out.message = status == theory_status::ok ? "" : (message.empty() ? "iteration cap reached" : message);
  out.residual = residual;
  out.newton_steps = newton_steps;
  if (!last) {
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
  }
  const auto& e = *last;
  const vec3 xf = admissible(e.Fx, Qt) ? e.Fx : e.x;
  out.x = as_overlaps(xf);
  out.hats_stein = e.channel.stein;
  out.hats_hessian = e.channel.hessian;
  out.hats = use_stein ? e.channel.stein : e.channel.hessian;
  out.hat_m_rel_diff = (e.channel.stein.m_hat - e.channel.hessian.m_hat) / e.channel.stein.m_hat;
  out.hat_V_rel_diff = (e.channel.stein.V_hat - e.channel.hessian.V_hat) / e.channel.stein.V_hat;
  out.delta = e.prior.delta;
  out.eps = e.prior.eps;
  out.scale = e.prior.scale;
  out.mse_S = Q0 + xf[0] - 2 * xf[1];
  out.train_loss = e.channel.train_loss;
  out.rank_fraction = e.prior.rank_fraction;
  out.atom_at_0 = e.prior.atom_at_0;
  out.trace_per_d = e.prior.trace_per_d;
  out.rank_capped = e.prior.rank_capped;
  out.objective_per_d2 = p.alpha * out.train_loss +
                         p.lambda * (p.param == parametrisation::direct ? xf[0] : out.trace_per_d);
  out.frac_two_minima = e.channel.frac_two_minima;
  out.frac_prox_not_converged = e.channel.frac_not_converged;
  const bool have_final = !samples.empty() && samples.back().size() == (std::size_t{1} << o.log2_points);
  const auto te = test_error(p, xf[0], xf[1], have_final ? samples.back() : channel_sample(p, o.log2_points, o.seed));
  out.test_clean = te.clean;
  out.test_noisy = te.noisy;
  if (o.spectrum) out.spectrum = spectrum_of_estimator(p, e.prior);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

} // namespace slr::tied
