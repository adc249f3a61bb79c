#include "slr/sweep/point_row.hpp"

#include <map>

#include "slr/methods/registry.hpp"

namespace slr::sweep {

archive::point_row make_point_row(const job::sweep_point& sp, const grid::result_record& record) {
  return archive::make_point_row(sp.point.method, methods::point_parameters(sp.point), sp.repeat, sp.id,
                                 sp.point.seed, record);
}

void describe_declared_parameters() {
  std::map<std::string, archive::parameter_description> descriptions;
  const auto add = [&](const grid::parameter_spec& spec) {
    descriptions.emplace(spec.name, archive::parameter_description{spec.help, spec.unit});
    if (spec.type == grid::value_type::length)
      descriptions.emplace(spec.name + "_pmf", archive::parameter_description{spec.help + " (canonical law)", ""});
  };
  for (const auto& spec : methods::slr_model().parameters) add(spec);
  for (const auto& method : methods::all_methods())
    for (const auto& spec : method.options) add(spec);
  archive::set_parameter_descriptions(std::move(descriptions));
}

} // namespace slr::sweep
