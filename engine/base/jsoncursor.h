#pragma once

#include "base/inputerror.h"
#include "base/jsonvalue.h"

#include <nlohmann/json.hpp>

#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace railyard::engine {

// A position in a parsed JSON document that knows its file and JSON path, so every error says
// where it is and what was expected ("layout.json: /cluster/nodes: expected an integer >= 1,
// got -3").
class JsonCursor
{
public:
    JsonCursor(const Json &value, std::string file, std::string path = {});

    const Json &value() const { return *m_value; }
    const std::string &path() const { return m_path; }
    const std::string &file() const { return m_file; }

    bool has(std::string_view key) const;
    // The member `key`; throws when it is missing.
    JsonCursor at(std::string_view key) const;
    std::optional<JsonCursor> find(std::string_view key) const;
    JsonCursor at(std::size_t index) const;
    std::size_t size() const;

    [[noreturn]] void fail(const std::string &message) const;
    [[noreturn]] void expected(const std::string &what) const;

    void requireObject() const;
    void requireArray() const;
    std::int64_t toInt(std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                       std::int64_t max = std::numeric_limits<std::int64_t>::max()) const;
    double toDouble(double min = -std::numeric_limits<double>::infinity(),
                    double max = std::numeric_limits<double>::infinity()) const;
    bool toBool() const;
    std::string toString() const;
    // One of `choices`; the error lists them.
    std::string toChoice(const std::vector<std::string> &choices) const;

    // Optional members with defaults and range checks.
    int intOr(std::string_view key, int fallback, int min, int max) const;
    double doubleOr(std::string_view key, double fallback, double min, double max) const;
    bool boolOr(std::string_view key, bool fallback) const;
    std::string stringOr(std::string_view key, const std::string &fallback) const;
    std::optional<int> optInt(std::string_view key, int min, int max) const;
    std::optional<double> optDouble(std::string_view key, double min, double max) const;
    std::optional<bool> optBool(std::string_view key) const;

    // "a string \"abc\"", "-3", "an array", ...: how a value reads in an error message.
    static std::string describe(const Json &value);

private:
    const Json *m_value;
    std::string m_file;
    std::string m_path;
};

// The deepest nesting of objects and arrays a JSON file may have. A layout nests about five
// levels; 64 leaves room for any tool's extra keys while keeping everything that walks a
// document recursively (copy, compare, dump) far from the stack's limit.
inline constexpr int kMaxJsonDepth = 64;
// The largest JSON text read (a layout of 262,144 GPUs with a mapping is about 4 MiB), and the
// most values (numbers, strings, objects, ...) it may hold: the mapping of that layout has
// 262,144. Together they bound the time and memory a file can take to parse (about 150 MB and
// a second or two at worst); a larger file is refused with a message.
inline constexpr std::size_t kMaxJsonBytes = std::size_t(32) << 20;
inline constexpr std::size_t kMaxJsonValues = std::size_t(1) << 21;

// Parses `text` (the contents of `file`). Every problem is an InputError naming the file and the
// line and column: syntax errors, numbers too large for a double, NUL bytes, nesting deeper than
// kMaxJsonDepth, a key given twice in one object (refused, naming its JSON path and both
// places), a text larger than kMaxJsonBytes or with more than kMaxJsonValues values.
Json parseJsonText(const std::string &text, const std::string &file);

} // namespace railyard::engine
