// The HDF5 side of `slr-sweep export --format grid` (grid_export.hpp). Dimension scales come
// from the HDF5 high-level library (H5DS), which is what netCDF-4, h5netcdf/xarray and h5py's
// Dataset.dims use, so the axes arrive named without any convention of our own. Coordinates that
// are not dimensions are attached to their axis's scale and listed in each variable's CF
// `coordinates` attribute, which is how netCDF readers (xarray's decode_coords) find them.
#include "slr/archive/grid_export.hpp"

#include <hdf5_hl.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <stdexcept>

#include "hdf5_calls.hpp"

namespace slr::archive {
namespace {

h5::handle create_dataset(const h5::handle& file, const std::string& name, hid_t type, const h5::handle& space) {
  const std::string what = file.what() + ":/" + name;
  return {h5::check(H5Dcreate2(file.get(), name.c_str(), type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                    "H5Dcreate2", what),
          H5Dclose, what};
}

h5::handle data_space(const std::vector<hsize_t>& dims, const std::string& what) {
  if (dims.empty()) return h5::scalar_space(what);
  return {h5::check(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), "H5Screate_simple", what),
          H5Sclose, what};
}

void write_texts(const h5::handle& dataset, const std::vector<std::string>& texts) {
  auto type = h5::string_type(0, dataset.what());
  std::vector<const char*> pointers;
  pointers.reserve(texts.size());
  for (const auto& t : texts) pointers.push_back(t.c_str());
  if (!pointers.empty())
    h5::check(H5Dwrite(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, pointers.data()), "H5Dwrite",
              dataset.what());
}

void attach_axes(const h5::handle& dataset, const std::vector<h5::handle>& scales, const grid_dataset& data) {
  for (std::size_t d = 0; d < scales.size(); ++d) {
    h5::check(H5DSattach_scale(dataset.get(), scales[d].get(), static_cast<unsigned>(d)), "H5DSattach_scale",
              dataset.what() + " dimension " + std::to_string(d));
    h5::check(H5DSset_label(dataset.get(), static_cast<unsigned>(d), data.axes[d].name.c_str()), "H5DSset_label",
              dataset.what());
  }
}

// A 1-D dataset of numbers or texts (an axis or a coordinate).
h5::handle write_vector(const h5::handle& file, const std::string& name, bool is_text,
                        const std::vector<double>& numbers, const std::vector<std::string>& texts,
                        const std::string& what) {
  auto space = data_space({is_text ? texts.size() : numbers.size()}, what);
  if (is_text) {
    auto type = h5::string_type(0, what);
    auto dataset = create_dataset(file, name, type.get(), space);
    write_texts(dataset, texts);
    return dataset;
  }
  auto dataset = create_dataset(file, name, H5T_NATIVE_DOUBLE, space);
  h5::check(H5Dwrite(dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, numbers.data()), "H5Dwrite",
            what);
  return dataset;
}

// CF attributes of an axis or coordinate: long_name always (the name if none is given), units if any.
void describe(const h5::handle& dataset, const std::string& name, const std::string& long_name,
              const std::string& units) {
  h5::write_text_attribute(dataset, "long_name", long_name.empty() ? name : long_name);
  if (!units.empty()) h5::write_text_attribute(dataset, "units", units);
}

} // namespace

void write_grid(const std::filesystem::path& path, const grid_dataset& data) {
  std::vector<hsize_t> dims;
  std::size_t cells = 1;
  std::set<std::string> names;
  for (const auto& axis : data.axes) {
    if (axis.size() == 0) throw std::invalid_argument("grid export: axis " + axis.name + " is empty");
    if (!names.insert(axis.name).second) throw std::invalid_argument("grid export: duplicate name " + axis.name);
    dims.push_back(axis.size());
    cells *= axis.size();
  }
  for (const auto& c : data.coordinates) {
    if (!names.insert(c.name).second) throw std::invalid_argument("grid export: duplicate name " + c.name);
    if (c.axis >= data.axes.size())
      throw std::invalid_argument("grid export: coordinate " + c.name + " refers to axis " + std::to_string(c.axis) +
                                  " of " + std::to_string(data.axes.size()));
    if (c.size() != data.axes[c.axis].size())
      throw std::invalid_argument("grid export: coordinate " + c.name + " has " + std::to_string(c.size()) +
                                  " values for the " + std::to_string(data.axes[c.axis].size()) + " of axis " +
                                  data.axes[c.axis].name);
  }
  // CF: the non-dimension coordinates of every N-D variable (xarray's decode_coords reads it).
  std::string coordinate_names;
  for (const auto& c : data.coordinates) coordinate_names += (coordinate_names.empty() ? "" : " ") + c.name;
  for (const auto& v : data.variables) {
    if (!names.insert(v.name).second) throw std::invalid_argument("grid export: duplicate name " + v.name);
    if (v.values.size() != cells)
      throw std::invalid_argument("grid export: variable " + v.name + " has " + std::to_string(v.values.size()) +
                                  " values for " + std::to_string(cells) + " grid cells");
  }
  for (const auto& v : data.text_variables) {
    if (!names.insert(v.name).second) throw std::invalid_argument("grid export: duplicate name " + v.name);
    if (v.values.size() != cells)
      throw std::invalid_argument("grid export: variable " + v.name + " has " + std::to_string(v.values.size()) +
                                  " values for " + std::to_string(cells) + " grid cells");
  }

  const auto temporary = path; // names in messages
  {
    auto file = h5::file_create_in_memory(path.string());
    std::vector<h5::handle> scales;
    for (const auto& axis : data.axes) {
      const std::string what = temporary.string() + ":/" + axis.name;
      scales.push_back(write_vector(file, axis.name, axis.is_text, axis.numbers, axis.texts, what));
      h5::check(H5DSset_scale(scales.back().get(), axis.name.c_str()), "H5DSset_scale", what);
      describe(scales.back(), axis.name, axis.long_name, axis.units);
    }
    for (const auto& c : data.coordinates) {
      const std::string what = temporary.string() + ":/" + c.name;
      auto dataset = write_vector(file, c.name, c.is_text, c.numbers, c.texts, what);
      h5::check(H5DSattach_scale(dataset.get(), scales[c.axis].get(), 0), "H5DSattach_scale", what);
      describe(dataset, c.name, c.long_name, c.units);
    }
    for (const auto& v : data.variables) {
      auto space = data_space(dims, temporary.string() + ":/" + v.name);
      auto dataset = create_dataset(file, v.name, H5T_NATIVE_DOUBLE, space);
      h5::check(H5Dwrite(dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.values.data()), "H5Dwrite",
                dataset.what());
      attach_axes(dataset, scales, data);
      if (!coordinate_names.empty()) h5::write_text_attribute(dataset, "coordinates", coordinate_names);
    }
    for (const auto& v : data.text_variables) {
      auto space = data_space(dims, temporary.string() + ":/" + v.name);
      auto type = h5::string_type(0, temporary.string() + ":/" + v.name);
      auto dataset = create_dataset(file, v.name, type.get(), space);
      write_texts(dataset, v.values);
      attach_axes(dataset, scales, data);
      if (!coordinate_names.empty()) h5::write_text_attribute(dataset, "coordinates", coordinate_names);
    }
    for (const auto& [name, value] : data.attributes) h5::write_text_attribute(file, name.c_str(), value);
    scales.clear();
    h5::save_image(file, path); // temporary file, fsync, rename: a failure leaves no partial file
  }
}

} // namespace slr::archive
