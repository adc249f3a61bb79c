#include "slr/methods/registry.hpp"

#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "slr/grid/suggest.hpp"
#include "slr/model/activation.hpp"
#include "slr/model/task.hpp"

#include "adapters.hpp"
#include "slr/tied/channel.hpp"

namespace slr::methods {

namespace {

// What solve_point adds to the record of every method.
output_spec wall_time_output() {
  return {.name = "wall_s",
          .meaning = "wall-clock time of the whole solve of the point (a measurement, not a result)",
          .unit = "s"};
}

method_descriptor with_common_outputs(method_descriptor method) {
  method.outputs.push_back(wall_time_output());
  return method;
}

std::vector<method_descriptor>& registry() {
  static std::vector<method_descriptor> methods = [] {
    std::vector<method_descriptor> list = {detail::describe_bayes(), detail::describe_population(),
                                                   detail::describe_fixed_point(),
                                                   detail::describe_state_evolution(),
                                                   detail::describe_bayes_jump(),
                                                   detail::describe_erm(),
                                                   detail::describe_synthetic(),
                                                   detail::describe_tied_fixed_point(),
                                                   detail::describe_tied_erm(),
                                                   detail::describe_tied_threshold()};
    for (auto& method : list) method = with_common_outputs(std::move(method));
    return list;
  }();
  return methods;
}

model_descriptor describe_slr_model() {
  using vt = grid::value_type;
  model_descriptor m;
  m.name = "slr";
  m.summary = "single-location regression: L Gaussian tokens in dimension D, the label carried by one hidden location";
  std::vector<std::string> tasks, activations;
  for (const auto& t : model::task_names()) tasks.emplace_back(t.name);
  for (const auto& a : model::activation_names()) activations.emplace_back(a.name);
  const double inf = std::numeric_limits<double>::infinity();
  grid::parameter_spec task{"task", vt::choice, "spiked",
                            "the task: spiked (a spike sqrt(nu) at the hidden location) or max (location ~ softmax(nu chi*))",
                            tasks};
  grid::parameter_spec nu{"nu", vt::real, "1", "nu: strength of the location signal (inf: argmax, max task only)",
                          {}, 0, inf};
  nu.allow_infinity = true;
  grid::parameter_spec lengths{"L", vt::length, "3", "sequence length L, or its law P_L as a pmf \"1:0.25,3:0.75\""};
  grid::parameter_spec delta{"delta", vt::real, "0",
                             "Delta: standard deviation of the label noise (y = z* + Delta xi, xi ~ N(0, 1); the "
                             "risk includes Delta^2)",
                             {}, 0, inf};
  grid::parameter_spec activation{"activation", vt::choice, "softmax", "the attention activation sigma",
                                  activations};
  grid::parameter_spec erf_offset{"erf_offset", vt::real, "0", "c: offset of the erf activation (erf only)"};
  grid::parameter_spec alpha{"alpha", vt::real, "", "alpha = N/D: samples per dimension (finite-alpha methods)",
                             {}, 0, inf};
  alpha.minimum_exclusive = true;
  grid::parameter_spec r_k{"r_k", vt::real, "", "r_k: L2 penalty on the key k (ERM methods)", {}, 0, inf};
  grid::parameter_spec r_v{"r_v", vt::real, "", "r_v: L2 penalty on the value v (ERM methods)", {}, 0, inf};
  m.parameters = {task, nu, lengths, delta, activation, erf_offset, alpha, r_k, r_v};
  return m;
}

model_descriptor describe_tied_model() {
  using vt = grid::value_type;
  const double inf = std::numeric_limits<double>::infinity();
  model_descriptor m;
  m.name = "tied-attention";
  m.summary = "single-head tied attention S = W W^T/sqrt(r d) on the attention-indexed model, trained by ERM";
  grid::parameter_spec d{"d", vt::integer, "100", "token dimension d (finite-d methods)", {}, 4, 1e5};
  grid::parameter_spec T{"T", vt::integer, "2",
                         "tokens per sequence T (the replica-symmetric theory: T <= " +
                             std::to_string(tied::max_channel_T) + ")",
                         {}, 2, static_cast<double>(tied::max_tokens)};
  grid::parameter_spec alpha{"alpha", vt::real, "", "alpha: n = alpha d^2 training sequences", {}, 0, inf};
  alpha.minimum_exclusive = true;
  grid::parameter_spec k0{"k0", vt::real, "0.5", "k0 = r*/d: rank ratio of the (Marchenko-Pastur) target", {}, 0, 1};
  k0.minimum_exclusive = true;
  grid::parameter_spec k{"k", vt::real, "1", "k = r/d: width ratio of the factorised student", {}, 0, 1e3};
  k.minimum_exclusive = true;
  grid::parameter_spec lambda{"lambda", vt::real, "0.01", "lambda: weight decay (penalty lambda d Tr S, or lambda d |S|_F^2 direct)",
                              {}, 0, inf};
  grid::parameter_spec delta{"delta", vt::real, "0.5", "Delta: variance of the pre-softmax label noise", {}, 0, inf};
  grid::parameter_spec beta{"beta", vt::real, "1", "beta: inverse temperature of the student softmax", {}, 0, inf};
  beta.minimum_exclusive = true;
  grid::parameter_spec beta0{"beta0", vt::real, "1", "beta0: inverse temperature of the teacher softmax", {}, 0, inf};
  beta0.minimum_exclusive = true;
  const auto names_of = [](const auto& all, auto name_of) {
    std::vector<std::string> names;
    for (auto value : all) names.emplace_back(name_of(value));
    return names;
  };
  grid::parameter_spec parametrisation{"parametrisation", vt::choice,
                                       std::string(tied::parametrisation_name(tied::parametrisation::factorised)),
                                       "factorised S = W W^T/sqrt(r d); direct symmetric S; psd-nuclear convex program",
                                       names_of(tied::all_parametrisations, tied::parametrisation_name)};
  grid::parameter_spec labels{"labels", vt::choice, std::string(tied::label_form_name(tied::label_form::seq2label)),
                              "what ERM fits: seq2label the TxT attention matrix Y; seq2seq the outputs Y X "
                              "(loss (1/d)|(A - Y) X|_F^2); the replica-symmetric theory is the same for both",
                              names_of(tied::all_label_forms, tied::label_form_name)};
  // Added after archives of the model existed: at seq2label a point keeps its identity.
  labels.omitted_when_default = true;
  // Both forms of a repeat train on the same teacher and sequences: differences are paired.
  labels.paired_seed = true;
  m.parameters = {d, T, alpha, k0, k, lambda, delta, beta, beta0, parametrisation, labels};
  return m;
}

const grid::parameter_spec& model_parameter(std::string_view name) {
  if (const auto* spec = slr_model().find(name)) return *spec;
  throw std::logic_error("no model parameter '" + std::string(name) + "'");
}

bool is_model_parameter(std::string_view name) { return slr_model().find(name) != nullptr; }

const grid::parameter_spec* find_option(const method_descriptor& method, std::string_view name) {
  for (const auto& spec : method.options)
    if (spec.name == name) return &spec;
  return nullptr;
}

} // namespace

const grid::parameter_spec* model_descriptor::find(std::string_view parameter) const noexcept {
  for (const auto& spec : parameters)
    if (spec.name == parameter) return &spec;
  return nullptr;
}

const model_descriptor& slr_model() {
  static const model_descriptor model = describe_slr_model();
  return model;
}

const std::vector<model_descriptor>& all_models() {
  static const std::vector<model_descriptor> models = {slr_model(), describe_tied_model()};
  return models;
}

const model_descriptor& find_model(std::string_view name) {
  std::string known;
  std::vector<std::string> names;
  for (const auto& m : all_models()) {
    if (m.name == name) return m;
    known += (known.empty() ? "" : ", ") + m.name;
    names.push_back(m.name);
  }
  throw std::invalid_argument("unknown model '" + std::string(name) + "'" + grid::did_you_mean(name, names) +
                              " (expected one of: " + known + ")");
}

const model_descriptor& model_of(const method_descriptor& method) { return find_model(method.model); }

std::string_view model_of(const grid::point& point) noexcept {
  return point.model.empty() ? std::string_view("slr") : std::string_view(point.model);
}

const std::vector<method_descriptor>& all_methods() { return registry(); }

const output_spec* find_output(const method_descriptor& method, std::string_view name) noexcept {
  for (const auto& output : method.outputs)
    if (output.name == name) return &output;
  return nullptr;
}

const method_descriptor& find_method(std::string_view name) { return find_method("slr", name); }

const method_descriptor& find_method(std::string_view model, std::string_view name) {
  std::string known;
  std::vector<std::string> names;
  for (const auto& m : all_methods()) {
    if (m.model != model) continue;
    if (m.name == name) return m;
    if (!m.listed) continue;
    known += (known.empty() ? "" : ", ") + m.name;
    names.push_back(m.name);
  }
  (void)find_model(model);
  // A method of another model is a likelier slip than a typing error.
  std::string elsewhere;
  for (const auto& m : all_methods())
    if (m.model != model && m.name == name && m.listed) elsewhere = " (a method of model " + m.model + ")";
  throw std::invalid_argument("unknown method '" + std::string(name) + "'" +
                              (model == "slr" ? std::string() : " of model " + std::string(model)) +
                              (elsewhere.empty() ? grid::did_you_mean(name, names) : elsewhere) +
                              " (expected one of: " + known + ")");
}

const method_descriptor& find_method(const grid::point& point) { return find_method(model_of(point), point.method); }

void register_method(method_descriptor method) {
  const auto& model = find_model(method.model);
  for (const auto& m : registry())
    if (m.model == method.model && m.name == method.name)
      throw std::invalid_argument("method '" + method.name + "' is already registered");
  for (const auto& spec : method.options)
    if (model.find(spec.name) != nullptr)
      throw std::invalid_argument("option '" + spec.name + "' of method " + method.name +
                                  " has the name of a model parameter");
  registry().push_back(with_common_outputs(std::move(method)));
}

bool uses_model_parameter(const method_descriptor& method, std::string_view name) {
  for (const auto& unused : method.unused_model_parameters)
    if (unused == name) return false;
  if (method.model != "slr") return model_of(method).find(name) != nullptr;
  if (name == "alpha") return method.finite_alpha;
  if (name == "r_k" || name == "r_v") return method.finite_alpha && method.uses_regularisation;
  return is_model_parameter(name);
}

std::vector<const grid::parameter_spec*> method_parameters(const method_descriptor& method) {
  std::vector<const grid::parameter_spec*> out;
  for (const auto& spec : model_of(method).parameters)
    if (uses_model_parameter(method, spec.name)) out.push_back(&spec);
  for (const auto& spec : method.options) out.push_back(&spec);
  return out;
}

const grid::parameter_spec* find_parameter(std::string_view name) {
  for (const auto& model : all_models())
    if (const auto* spec = model.find(name)) return spec;
  for (const auto& m : all_methods())
    if (const auto* spec = find_option(m, name)) return spec;
  return nullptr;
}

std::string canonical_option(const option_spec& spec, std::string_view value) {
  try {
    return grid::canonical_value(spec, value);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("option '" + spec.name + "': " + e.what());
  }
}

grid::point make_point(const method_descriptor& method, const std::map<std::string, std::string>& values) {
  const auto& model = model_of(method);
  for (const auto& [name, value] : values)
    if (!(model.find(name) != nullptr && uses_model_parameter(method, name)) &&
        find_option(method, name) == nullptr)
      throw std::invalid_argument("parameter '" + name + "' is not used by method " + method.name);
  if (method.model != "slr") {
    // Every parameter of another model is canonical text in options, the model's beside the
    // method's; complete_point fills the defaults and canonicalises them all.
    grid::point p;
    p.model = method.model;
    p.method = method.name;
    p.options = values;
    complete_point(p);
    return p;
  }
  const auto get = [&](std::string_view name) {
    const auto& spec = model_parameter(name);
    const auto it = values.find(spec.name);
    if (it == values.end() && spec.default_value.empty())
      throw std::invalid_argument("parameter '" + spec.name + "' is required by method " + method.name);
    try {
      return grid::canonical_value(spec, it == values.end() ? spec.default_value : it->second);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("parameter '" + spec.name + "': " + e.what());
    }
  };
  grid::point p;
  p.method = method.name;
  try {
    p.problem.task = model::task(model::task::parse_kind(get("task")), std::stod(get("nu")));
  } catch (const std::invalid_argument& e) {
    throw parameter_error("nu", "nu = " + get("nu") + " with task " + get("task") + ": " + e.what());
  }
  p.problem.lengths = model::length_law::parse(get("L"));
  p.problem.delta = std::stod(get("delta"));
  p.problem.activation.kind = model::activation_spec::parse_kind(get("activation"));
  p.problem.activation.erf_offset =
      p.problem.activation.kind == model::activation_kind::erf ? std::stod(get("erf_offset")) : 0.0;
  if (method.finite_alpha) p.alpha = std::stod(get("alpha"));
  if (method.finite_alpha && method.uses_regularisation) {
    p.r_k = std::stod(get("r_k"));
    p.r_v = std::stod(get("r_v"));
  }
  for (const auto& [name, value] : values)
    if (find_option(method, name) != nullptr) p.options[name] = value;
  complete_point(p);
  return p;
}

std::vector<grid::parameter_value> point_parameters(const grid::point& point) {
  using pv = grid::parameter_value;
  const auto& method = find_method(point);
  std::vector<pv> cells;
  if (method.model != "slr") {
    for (const auto* spec : method_parameters(method)) {
      const auto it = point.options.find(spec->name);
      for (auto& cell : grid::typed_values(*spec, it == point.options.end() ? spec->default_value : it->second))
        cells.push_back(std::move(cell));
    }
    return cells;
  }
  cells.push_back(pv::of_text("task", point.problem.task.name()));
  cells.push_back(pv::of_real("nu", point.problem.task.nu()));
  for (auto& cell : grid::typed_values(model_parameter("L"), point.problem.lengths.to_string()))
    cells.push_back(std::move(cell));
  cells.push_back(pv::of_real("delta", point.problem.delta));
  cells.push_back(pv::of_text("activation", point.problem.activation.kind_name()));
  if (point.problem.activation.kind == model::activation_kind::erf)
    cells.push_back(pv::of_real("erf_offset", point.problem.activation.erf_offset));
  if (method.finite_alpha) cells.push_back(pv::of_real("alpha", point.alpha));
  if (method.finite_alpha && method.uses_regularisation) {
    cells.push_back(pv::of_real("r_k", point.r_k));
    cells.push_back(pv::of_real("r_v", point.r_v));
  }
  for (const auto& spec : method.options) {
    const auto it = point.options.find(spec.name);
    for (auto& cell : grid::typed_values(spec, it == point.options.end() ? spec.default_value : it->second))
      cells.push_back(std::move(cell));
  }
  return cells;
}

std::vector<grid::parameter_value> retype_parameters(std::string_view method_name,
                                                     std::vector<grid::parameter_value> cells) {
  // Two models may name a method alike (erm): the row is of the one that declares most of its cells.
  const method_descriptor* method = nullptr;
  std::size_t best = 0;
  for (const auto& m : all_methods()) {
    if (m.name != method_name) continue;
    std::size_t known = 0;
    for (const auto& cell : cells) known += find_option(m, cell.name) != nullptr ? 1 : 0;
    if (method == nullptr || known > best) {
      method = &m;
      best = known;
    }
  }
  if (method == nullptr) return cells;
  for (auto& cell : cells) {
    const auto* spec = find_option(*method, cell.name);
    if (spec == nullptr || spec->type == grid::value_type::length) continue;
    try {
      auto typed = grid::typed_values(*spec, grid::canonical_value(*spec, cell.to_text()));
      if (typed.size() == 1) cell = std::move(typed.front());
    } catch (const std::exception&) {
      // A value this release no longer accepts keeps its guessed type: the data stay readable.
    }
  }
  return cells;
}

void complete_point(grid::point& point) {
  const auto& method = find_method(point);
  if (method.model != "slr") {
    const auto& model = model_of(method);
    for (const auto& [key, value] : point.options)
      if (find_option(method, key) == nullptr &&
          !(model.find(key) != nullptr && uses_model_parameter(method, key)))
        throw std::invalid_argument("parameter '" + key + "' is not used by method " + method.name);
    for (const auto& spec : model.parameters) {
      if (!uses_model_parameter(method, spec.name)) continue;
      const auto it = point.options.find(spec.name);
      if (it == point.options.end() && spec.default_value.empty())
        throw std::invalid_argument("parameter '" + spec.name + "' is required by method " + method.name);
      std::string value;
      try {
        value = grid::canonical_value(spec, it == point.options.end() ? spec.default_value : it->second);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("parameter '" + spec.name + "': " + e.what());
      }
      if (spec.omitted_when_default && value == spec.default_value)
        point.options.erase(spec.name);
      else
        point.options[spec.name] = std::move(value);
    }
  } else {
    point.problem.validate();
    for (const auto& [key, value] : point.options) {
      bool known = false;
      for (const auto& spec : method.options) known = known || spec.name == key;
      if (!known) throw std::invalid_argument("option '" + key + "' is not used by method " + method.name);
    }
  }
  for (const auto& spec : method.options) {
    const auto it = point.options.find(spec.name);
    auto value = canonical_option(spec, it == point.options.end() ? spec.default_value : it->second);
    if (spec.omitted_when_default && value == spec.default_value)
      point.options.erase(spec.name);
    else
      point.options[spec.name] = std::move(value);
  }
  if (method.model != "slr") {
    // Other models keep α, r in their own declared parameters (options).
  } else if (method.finite_alpha) {
    if (!(point.alpha > 0) || std::isinf(point.alpha))
      throw std::invalid_argument("alpha must be finite and > 0 for method " + method.name);
    if (method.uses_regularisation) {
      if (!(point.r_k >= 0) || std::isinf(point.r_k)) throw std::invalid_argument("r_k must be finite and >= 0");
      if (!(point.r_v >= 0) || std::isinf(point.r_v)) throw std::invalid_argument("r_v must be finite and >= 0");
    } else {
      point.r_k = point.r_v = grid::not_set;
    }
  } else {
    // Keeps identities canonical: α and r mean nothing to a population-level method.
    point.alpha = point.r_k = point.r_v = grid::not_set;
  }
  if (method.validate) method.validate(point);
}

double option_number(const grid::point& point, std::string_view name) {
  return std::stod(option_text(point, name));
}

const std::string& option_text(const grid::point& point, std::string_view name) {
  const auto it = point.options.find(std::string(name));
  if (it != point.options.end()) return it->second;
  for (const auto& spec : find_method(point).options)
    if (spec.name == name && spec.omitted_when_default) return spec.default_value; // left out at its default
  if (const auto& method = find_method(point); method.model != "slr")
    if (const auto* spec = model_of(method).find(name); spec != nullptr && spec->omitted_when_default)
      return spec->default_value;
  throw std::out_of_range("point has no option '" + std::string(name) + "'");
}

grid::result_record solve_point(const grid::point& point, const run_context& context) {
  const auto start = std::chrono::steady_clock::now();
  grid::result_record record;
  try {
    record = find_method(point).solve(point, context);
  } catch (const std::exception& e) {
    record = grid::result_record{};
    record.status = grid::status::failed;
    record.message = e.what();
  }
  record.set("wall_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return record;
}

namespace detail {
grid::status to_grid_status(theory::solve_status status) {
  switch (status) {
  case theory::solve_status::ok: return grid::status::ok;
  case theory::solve_status::not_converged: return grid::status::not_converged;
  case theory::solve_status::diverged: return grid::status::diverged;
  case theory::solve_status::timeout: return grid::status::timeout;
  case theory::solve_status::failed: return grid::status::failed;
  }
  return grid::status::failed;
}

nlohmann::ordered_json finite_or_null(double x) {
  return std::isfinite(x) ? nlohmann::ordered_json(x) : nlohmann::ordered_json(nullptr);
}

std::vector<output_spec> order_parameter_outputs(const std::string& of_what) {
  const auto overlap = [&](const char* name, const char* text) {
    return output_spec{.name = std::string("order_parameters.") + name, .meaning = text + (" of " + of_what)};
  };
  return {overlap("m_kk", "m_kk* = k*.k/D: overlap of the student key k with the teacher key k*"),
          overlap("m_kv", "m_kv* = v*.k/D: overlap of the student key k with the teacher value v*"),
          overlap("m_vk", "m_vk* = k*.v/D: overlap of the student value v with the teacher key k*"),
          overlap("m_vv", "m_vv* = v*.v/D: overlap of the student value v with the teacher value v*"),
          overlap("q_kk", "q_kk = k.k/D: squared norm of the student key per dimension"),
          overlap("q_kv", "q_kv = k.v/D: overlap of the student key and value"),
          overlap("q_vv", "q_vv = v.v/D: squared norm of the student value per dimension")};
}

option_spec samples_option(std::string default_value, double minimum) {
  return {"samples", option_spec::value_type::integer, std::move(default_value),
          "Monte Carlo samples S (common random numbers)", {}, minimum, 1e9};
}

option_spec common_samples_option() {
  option_spec o{"common-samples", option_spec::value_type::choice, "none",
                "alpha: every alpha of a curve draws the same Monte Carlo samples (seed derived without alpha), "
                "for smooth curves; none: independent samples per point",
                {"none", "alpha"}};
  o.omitted_when_default = true;
  return o;
}
} // namespace detail

} // namespace slr::methods
