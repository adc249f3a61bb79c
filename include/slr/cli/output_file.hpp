#pragma once
// Files written by `query -o` and `export -o`: never an input, never an existing file unless
// forced, and never half-written (a temporary file renamed into place once complete).
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace slr::cli {

/// Throws std::invalid_argument (exit 2) if `output` is one of `inputs` or an input's journal
/// (compared by device and inode, so links and other spellings are caught), if it exists and
/// `force` is false, if it is a directory, or if its directory does not exist.
void check_output_path(const std::filesystem::path& output, const std::vector<std::filesystem::path>& inputs,
                       bool force);

/// Writes `output` through `write_to(temporary_path)`, then fsyncs and renames it into place.
/// On any failure the temporary file is removed, an existing `output` is left as it was, and
/// std::runtime_error names the path and the operating system's reason (exit 1).
void write_output_file(const std::filesystem::path& output,
                       const std::function<void(const std::filesystem::path&)>& write_to);

/// write_output_file() for text produced in memory.
void write_output_text(const std::filesystem::path& output, const std::string& text);

} // namespace slr::cli
