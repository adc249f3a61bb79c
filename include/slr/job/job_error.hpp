#pragma once
// The one exception type of the job module: a job file that cannot be used. It names the
// file (or "<text>" for a string), the field ("grid.alpha", "method[2].samples", …), the
// reason, and where known the line and column (1-based) in the file.
#include <cstddef>
#include <stdexcept>
#include <string>

namespace slr::job {

class job_error : public std::invalid_argument {
public:
  /// line/column 0 = unknown. what() is "file:line:column: field: reason" (parts omitted when
  /// unknown), e.g. "jobs/x.toml:7:9: grid.alpha: logspace needs n >= 1, got 0".
  job_error(std::string file, std::string field, std::string reason, std::size_t line = 0, std::size_t column = 0);

  [[nodiscard]] const std::string& file() const noexcept { return file_; }
  [[nodiscard]] const std::string& field() const noexcept { return field_; }
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }
  [[nodiscard]] std::size_t line() const noexcept { return line_; }
  [[nodiscard]] std::size_t column() const noexcept { return column_; }

private:
  std::string file_, field_, reason_;
  std::size_t line_ = 0, column_ = 0;
};

} // namespace slr::job
