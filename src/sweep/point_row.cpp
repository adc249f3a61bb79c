#include "slr/sweep/point_row.hpp"

namespace slr::sweep {

archive::point_row make_point_row(const job::sweep_point& sp, const grid::result_record& record) {
  return archive::make_point_row(sp.point, sp.repeat, sp.id, record);
}

} // namespace slr::sweep
