#pragma once
// `slr-sweep export --format grid`: writes observables on a rectilinear grid to an HDF5 file
// that h5py, xarray (engine h5netcdf) and netCDF tools read with named dimensions:
//   /<axis>      1-D coordinate dataset per axis (float64, or variable-length UTF-8 text), made an
//                HDF5 dimension scale (H5DS) named after the axis
//   /<variable>  N-D float64 dataset over the axes (row-major, first axis outermost), NaN where a
//                grid point is missing, each dimension attached to its axis's scale
//   /<text variable> N-D variable-length UTF-8 text dataset (e.g. status; "" where missing)
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
  std::vector<grid_variable> variables;
  std::vector<grid_text_variable> text_variables;
  std::map<std::string, std::string> attributes; ///< text attributes of the root group
};

/// Writes the dataset. Throws std::invalid_argument if a variable's size does not match the
/// axes or names collide, hdf5_error on an HDF5 failure, archive_error if the rename fails.
void write_grid(const std::filesystem::path& path, const grid_dataset& data);

} // namespace slr::archive
