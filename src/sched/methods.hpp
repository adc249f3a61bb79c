#pragma once
// Private: one describe_* function per method, each in its own method_<name>.cpp.
#include "slr/sched/method_registry.hpp"

namespace slr::sched::detail {
method_descriptor describe_bayes();
method_descriptor describe_population();
method_descriptor describe_fixed_point();
method_descriptor describe_state_evolution();
method_descriptor describe_erm();
/// TESTING ONLY: deterministic hash-derived results with tunable cost, memory and failures.
method_descriptor describe_synthetic();

/// The option every Monte Carlo method shares.
option_spec samples_option(std::string default_value, double minimum);
} // namespace slr::sched::detail
