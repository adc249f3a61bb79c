#include "slr/job/job_error.hpp"

namespace slr::job {
namespace {
std::string compose(const std::string& file, const std::string& field, const std::string& reason, std::size_t line,
                    std::size_t column) {
  std::string text = file;
  if (line > 0) {
    text += ':';
    text += std::to_string(line);
    if (column > 0) {
      text += ':';
      text += std::to_string(column);
    }
  }
  if (!field.empty()) {
    text += ": ";
    text += field;
  }
  text += ": ";
  text += reason;
  return text;
}
} // namespace

job_error::job_error(std::string file, std::string field, std::string reason, std::size_t line, std::size_t column)
    : std::invalid_argument(compose(file, field, reason, line, column)), file_(std::move(file)),
      field_(std::move(field)), reason_(std::move(reason)), line_(line), column_(column) {}

} // namespace slr::job
