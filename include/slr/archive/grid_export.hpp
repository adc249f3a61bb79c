#pragma once
// `slr-sweep export --format grid`: writes observables on a rectilinear grid to an HDF5 file
// that h5py, xarray (engine h5netcdf) and netCDF tools read with named dimensions:
//   /<axis>        1-D dataset per dimension (float64, or variable-length UTF-8 text) holding its
//                  values, made an HDF5 dimension scale (H5DS) named after the axis
//   /<coordinate>  1-D dataset per non-dimension coordinate (a parameter that is a function of one
//                  dimension, e.g. D along alpha, r_v along r_k, method options along method),
//                  attached to that dimension's scale; NaN / "" where it does not apply
//   /<variable>    N-D float64 dataset over the axes (row-major, first axis outermost), NaN where a
//                  grid point is missing, each dimension attached to its axis's scale
//   /<text variable> N-D variable-length UTF-8 text dataset (e.g. status; "" where missing)
// Attributes (CF conventions): every dimension and coordinate dataset has `long_name` and, where
// it is not empty, `units`; every N-D variable has `coordinates` = the names of all
// non-dimension coordinates (space-separated), so xarray shows them as coordinates of the
// Dataset (`ds.D.dims == ("alpha",)`). Root attributes are free text (constant parameters, …).
// The file is written to "<path>.tmp" and renamed, so a reader never sees a half-written file.
// No HDF5 type appears here; the writer lives in src/archive (the only HDF5 user).
#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace slr::archive {

struct grid_axis {
  std::string name;
  bool is_text = false;
  std::vector<double> numbers;    ///< !is_text: coordinate values
  std::vector<std::string> texts; ///< is_text: coordinate values
  std::string long_name;          ///< CF long_name ("" = the name)
  std::string units;              ///< CF units ("" = none written)
  [[nodiscard]] std::size_t size() const noexcept { return is_text ? texts.size() : numbers.size(); }
};

/// A 1-D coordinate along one axis (not a dimension of its own).
struct grid_coordinate {
  std::string name;
  std::size_t axis = 0;           ///< index into grid_dataset::axes
  bool is_text = false;
  std::vector<double> numbers;    ///< !is_text: one value per value of the axis (NaN = not applicable)
  std::vector<std::string> texts; ///< is_text: one value per value of the axis ("" = not applicable)
  std::string long_name;          ///< CF long_name ("" = the name)
  std::string units;              ///< CF units ("" = none written)
  [[nodiscard]] std::size_t size() const noexcept { return is_text ? texts.size() : numbers.size(); }
};

struct grid_variable {
  std::string name;
  std::vector<double> values; ///< product of the axis sizes, row-major; NaN = missing
};

struct grid_text_variable {
  std::string name;
  std::vector<std::string> values; ///< product of the axis sizes, row-major; "" = missing
};

struct grid_dataset {
  std::vector<grid_axis> axes;                 ///< may be empty (a single point: scalar datasets)
  std::vector<grid_coordinate> coordinates;    ///< non-dimension coordinates, each along one axis
  std::vector<grid_variable> variables;
  std::vector<grid_text_variable> text_variables;
  std::map<std::string, std::string> attributes; ///< text attributes of the root group
};

/// Writes the dataset. Throws std::invalid_argument if a variable's or coordinate's size does not
/// match the axes, a coordinate names no axis or names collide, hdf5_error on an HDF5 failure,
/// archive_error if the rename fails.
void write_grid(const std::filesystem::path& path, const grid_dataset& data);

} // namespace slr::archive
