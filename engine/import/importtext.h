#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace railyard::engine {

// The largest file an importer reads. Real topology dumps and nccl-tests logs are a few KiB;
// 16 MiB leaves room for a 42-NIC matrix or a long multi-size sweep while bounding time and
// memory for anything else.
inline constexpr std::size_t kMaxImportBytes = std::size_t(16) << 20;
// The most lines a text importer looks at, and the longest line.
inline constexpr std::size_t kMaxImportLines = 200000;
inline constexpr std::size_t kMaxImportLineBytes = 64 * 1024;

// The bytes of a file to import: refuses what is not a regular file and files over
// kMaxImportBytes without reading them whole. Throws InputError naming the file.
std::string readImportText(const std::string &path);

// Checks that `text` is text an importer can read and throws InputError naming the file and the
// line otherwise: empty, NUL bytes (binary), UTF-16/32 byte order marks, bytes that are not
// UTF-8. A UTF-8 byte order mark is allowed (and skipped by splitImportLines).
void checkImportText(std::string_view text, const std::string &file);

// The lines of checked text, without line ends (LF, CRLF or CR), with ANSI escape sequences
// (a terminal's underline around nvidia-smi's header) removed. Throws InputError for more than
// kMaxImportLines lines or a line longer than kMaxImportLineBytes.
std::vector<std::string> splitImportLines(std::string_view text, const std::string &file);

// "line 12" for messages.
inline std::string lineRef(std::size_t number)
{
    return "line " + std::to_string(number);
}

// Whitespace-separated fields (spaces and tabs).
std::vector<std::string_view> splitFields(std::string_view line);

// A finite number written in full (no trailing garbage, no NaN or infinity), or false.
bool parseFiniteDouble(std::string_view text, double &out);
// A non-negative integer that fits `max`, or false.
bool parseCount(std::string_view text, long long max, long long &out);

} // namespace railyard::engine
