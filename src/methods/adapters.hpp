#pragma once
// Private: one describe_* function per method, each in its own <name>.cpp.
#include <nlohmann/json.hpp>

#include "slr/methods/registry.hpp"
#include "slr/theory/fixed_point.hpp"
#include "slr/tied/problem.hpp"
#include "slr/tied/theory.hpp"

namespace slr::methods::detail {
method_descriptor describe_bayes();
method_descriptor describe_population();
method_descriptor describe_fixed_point();
method_descriptor describe_state_evolution();
method_descriptor describe_bayes_jump();
method_descriptor describe_erm();
method_descriptor describe_tied_fixed_point();
method_descriptor describe_tied_erm();
method_descriptor describe_tied_threshold();
/// The tied-attention problem of a point (its declared parameters); throws std::invalid_argument
/// naming the first invalid one. The second form for methods without alpha (alpha set to 1).
tied::problem tied_problem(const grid::point& point);
tied::problem tied_problem_without_alpha(const grid::point& point);
/// "hats" of the tied theory's methods: which conjugates drive the fixed point (tied::hat_form).
/// Omitted from identities at its default "automatic".
option_spec tied_hats_option();
/// "qmc-points" of the tied theory's methods: log2 of the scrambled Sobol points of the fixed point's
/// final phase (default 16). omitted_when_default for a method that took it after archives existed.
option_spec tied_qmc_points_option(bool omitted_when_default);
/// tied::theory_options with what the tied theory's methods share taken from a point: the Sobol
/// scramble seed (the point's), "hats" and "qmc-points" (the coarse phase at 2^min(12, qmc-points)).
tied::theory_options tied_theory_options(const grid::point& point);
/// TESTING ONLY: deterministic hash-derived results with tunable cost, memory and failures.
method_descriptor describe_synthetic();

/// The record status of an iterative theory solve.
grid::status to_grid_status(theory::solve_status status);
/// A JSON number, or null for NaN/±∞ (JSON has neither).
nlohmann::ordered_json finite_or_null(double x);

/// The seven order parameters of single-location regression (docs/theory.md §0) as outputs
/// order_parameters.*, each "of <of_what>" (e.g. "the trained weights").
std::vector<output_spec> order_parameter_outputs(const std::string& of_what);

/// The option every Monte Carlo method shares.
option_spec samples_option(std::string default_value, double minimum);
/// "common-samples": "alpha" makes the points of one curve in α draw the same Monte Carlo
/// samples (the expansion derives their seed without α), so the curve is smooth and its
/// differences in α carry far less noise than its values. Omitted from identities at "none".
option_spec common_samples_option();
} // namespace slr::methods::detail
