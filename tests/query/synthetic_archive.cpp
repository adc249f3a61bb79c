#include "synthetic_archive.hpp"

#include <cmath>
#include <limits>

#include "slr/archive/writer.hpp"
#include "slr/model/random.hpp"

namespace slr::query::testing {

synthetic_row make_row(std::string method, std::string task, std::string activation, double nu, double alpha,
                       double r, unsigned repeat) {
  synthetic_row row;
  row.method = std::move(method);
  row.task = std::move(task);
  row.activation = std::move(activation);
  row.nu = nu;
  row.alpha = alpha;
  row.r_k = row.r_v = r;
  row.repeat = repeat;
  return row;
}

std::uint64_t point_id(const grid::point& point, std::uint32_t repeat) {
  if (repeat == 0) return point.identity();
  return model::stable_hash(point.canonical() + ";repeat=" + std::to_string(repeat));
}

archive::point_row row_of(const grid::point& p, std::uint32_t repeat, std::uint64_t id,
                          const grid::result_record& record) {
  std::string options;
  for (const auto& [key, value] : p.options) options += (options.empty() ? "" : ";") + key + "=" + value;
  const auto& lengths = p.problem.lengths;
  auto cells = archive::schema1_parameters(
      p.problem.task.name(), p.problem.task.nu(),
      lengths.is_fixed() ? static_cast<std::int64_t>(lengths.support().front().length) : -1, lengths.to_string(),
      p.problem.delta, p.problem.activation.kind_name(), std::nan(""), p.alpha, p.r_k, p.r_v, options);
  return archive::make_point_row(p.method, std::move(cells), repeat, id, p.seed, record);
}

void write_archive(const std::filesystem::path& path, const std::vector<synthetic_row>& rows) {
  const archive::journal_job job{"name = \"synthetic\"\nseed = 1\n[[method]]\nname = \"population\"\n",
                                 "5e7a1c0de5e7a1c0", "<synthetic>", "synthetic"};
  auto writer = archive::writer::create(path, job);
  writer.begin_run({1, "testhost", "synthetic"});
  std::vector<archive::point_row> batch;
  batch.reserve(rows.size());
  for (const auto& r : rows) {
    grid::point p;
    p.method = r.method;
    p.problem.task = model::task(model::task::parse_kind(r.task), r.nu);
    p.problem.activation.kind = model::activation_spec::parse_kind(r.activation);
    p.alpha = r.alpha;
    p.r_k = r.r_k;
    p.r_v = r.r_v;
    p.options = r.options;
    const auto id = point_id(p, r.repeat);
    p.seed = model::derive_seed(1, id);
    grid::result_record record;
    record.status = r.status;
    if (r.status == grid::status::failed) record.message = "synthetic failure";
    for (const auto& [name, value] : r.values) record.set(name, value);
    batch.push_back(row_of(p, r.repeat, id, record));
  }
  writer.record_batch(batch);
  writer.end_run("complete");
}

namespace {
constexpr double inf = std::numeric_limits<double>::infinity();

double activation_scale(const std::string& activation) {
  return activation == "softmax" ? 1.0 : activation == "linear" ? 2.0 : activation == "erf" ? 1.5 : 1.2;
}

// Closed forms shared with tests/query/test_export_plot.py.
double fixed_point_risk(const std::string& activation, double alpha, double r) {
  const double base = activation == "softmax" ? 0.48 : 0.6;
  const double best_r = alpha < 2 ? 1.0 : 0.1;
  return base + 0.5 / (1 + alpha) + 0.1 * std::abs(std::log10(r) - std::log10(best_r));
}

void set_order_parameters(synthetic_row& row, double alpha, double shift) {
  const double m_kk = alpha / (1 + alpha) + shift, m_vv = 0.5 + 0.1 * alpha + shift;
  row.values["order_parameters.m_kk"] = m_kk;
  row.values["order_parameters.m_kv"] = 0.01 * shift;
  row.values["order_parameters.m_vk"] = -0.01 * shift;
  row.values["order_parameters.m_vv"] = m_vv;
  row.values["order_parameters.q_kk"] = m_kk * m_kk + 0.2;
  row.values["order_parameters.q_kv"] = 0.0;
  row.values["order_parameters.q_vv"] = m_vv * m_vv + 0.1;
}
} // namespace

std::vector<synthetic_row> figure_rows() {
  std::vector<synthetic_row> rows;
  // Fig 2: minimal population risk per activation and the Bayes risk (spiked), max-SLR incl. ν = ∞.
  for (const char* activation : {"softmax", "linear", "erf", "softplus-kernel"})
    for (const double nu : {0.5, 1.0, 2.0, 4.0, 8.0}) {
      auto r = make_row("population", "spiked", activation, nu);
      r.values["risk"] = 1 - nu / (nu + activation_scale(activation));
      r.values["risk_stderr"] = 0.002;
      r.values["bayes_risk"] = 1 - nu / (nu + 0.9);
      rows.push_back(r);
    }
  for (const double nu : {0.5, 1.0, 2.0, 4.0, 8.0}) {
    auto r = make_row("bayes", "spiked", "softmax", nu);
    r.values["risk"] = r.values["bayes_risk"] = 1 - nu / (nu + 0.9);
    rows.push_back(r);
  }
  for (const char* activation : {"softmax", "linear"})
    for (const double nu : {1.0, 4.0, inf}) {
      auto r = make_row("population", "max", activation, nu);
      r.values["risk"] = std::isinf(nu) ? (activation == std::string("softmax") ? 0.0 : 0.4279)
                                        : 0.5 * activation_scale(activation) / (1 + nu);
      r.status = std::isinf(nu) && activation == std::string("softmax") ? grid::status::unbounded : grid::status::ok;
      rows.push_back(r);
    }
  // Fig 5: fixed students k = c k*, v = v*.
  for (const double c : {1.0, 2.0})
    for (const double nu : {0.5, 1.0, 2.0, 4.0, 8.0}) {
      auto r = make_row("population", "spiked", "softmax", nu);
      const auto text = [](double x) { return grid::format_number(x); };
      r.options["at"] = "m_kk=" + text(c) + ",q_kk=" + text(c * c) + ",m_vv=1,q_vv=1";
      const double gap = std::log(c) - 0.5 * std::log(nu);
      r.values["risk"] = 1 - nu / (nu + 1) + 0.1 * gap * gap;
      rows.push_back(r);
    }
  // Fig 3: fixed point on an (α, r) grid, one hole (linear, α = 4, r = 0.1), state evolution, ERM.
  for (const char* activation : {"softmax", "linear"})
    for (const double alpha : {0.5, 1.0, 2.0, 4.0})
      for (const double r : {0.1, 1.0}) {
        if (activation == std::string("linear") && alpha == 4.0 && r == 0.1) continue;
        auto row = make_row("fixed-point", "spiked", activation, 1.0, alpha, r);
        row.values["test_risk"] = fixed_point_risk(activation, alpha, r);
        row.values["train_loss"] = 0.1 / alpha;
        set_order_parameters(row, alpha, 0.0);
        rows.push_back(row);
      }
  for (const double alpha : {0.5, 1.0, 2.0, 4.0}) {
    auto row = make_row("state-evolution", "spiked", "softmax", 1.0, alpha);
    row.values["test_risk"] = 0.48 + 0.5 / (1 + 2 * alpha);
    rows.push_back(row);
  }
  // Fig 3 markers and Fig 4: ERM, three repeats.
  for (const char* activation : {"softmax", "linear"})
    for (const double alpha : {1.0, 4.0})
      for (unsigned repeat = 0; repeat < 3; ++repeat) {
        auto row = make_row("erm", "spiked", activation, 1.0, alpha, 0.1, repeat);
        row.options["D"] = "200";
        row.values["test_risk"] = fixed_point_risk(activation, alpha, 0.1) + 0.01 * (static_cast<double>(repeat) - 1);
        row.values["test_risk_stderr"] = 0.004;
        set_order_parameters(row, alpha, 0.02 * (static_cast<double>(repeat) - 1));
        rows.push_back(row);
      }
  return rows;
}

} // namespace slr::query::testing
