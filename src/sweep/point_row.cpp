#include "slr/sweep/point_row.hpp"

#include <map>

#include "slr/methods/registry.hpp"

namespace slr::sweep {

archive::point_row make_point_row(const job::sweep_point& sp, const grid::result_record& record) {
  return archive::make_point_row(sp.point.method, methods::point_parameters(sp.point), sp.repeat, sp.id,
                                 sp.point.seed, record);
}

void describe_declared_parameters() {
  // Every model's parameters, then every method's options (the first declaration of a name wins).
  // A model parameter that two models declare (alpha, delta) is described by both, the second
  // marked with its model's name: an archive does not say which model its points are of.
  std::map<std::string, archive::parameter_description> descriptions;
  for (const auto& model : methods::all_models())
    for (const auto& spec : model.parameters) {
      const std::string help = model.name == "slr" ? spec.help : spec.help + " [" + model.name + "]";
      const auto [it, inserted] = descriptions.emplace(spec.name, archive::parameter_description{help, spec.unit});
      if (!inserted) it->second.long_name += " | " + help;
      if (spec.type == grid::value_type::length)
        descriptions.emplace(spec.name + "_pmf", archive::parameter_description{spec.help + " (canonical law)", ""});
    }
  for (const auto& method : methods::all_methods())
    for (const auto& spec : method.options)
      descriptions.emplace(spec.name, archive::parameter_description{spec.help, spec.unit});
  archive::set_parameter_descriptions(std::move(descriptions));
}

} // namespace slr::sweep
