#include "base/jsoncursor.h"

#include "base/units.h"

#include <cmath>

namespace railyard::engine {

JsonCursor::JsonCursor(const Json &value, std::string file, std::string path)
    : m_value(&value)
    , m_file(std::move(file))
    , m_path(std::move(path))
{}

bool JsonCursor::has(std::string_view key) const
{
    return m_value->is_object() && m_value->contains(std::string(key));
}

JsonCursor JsonCursor::at(std::string_view key) const
{
    requireObject();
    const auto it = m_value->find(std::string(key));
    if (it == m_value->end())
        fail("missing required key \"" + std::string(key) + "\"");
    return JsonCursor(*it, m_file, m_path + "/" + std::string(key));
}

std::optional<JsonCursor> JsonCursor::find(std::string_view key) const
{
    requireObject();
    const auto it = m_value->find(std::string(key));
    if (it == m_value->end() || it->is_null())
        return std::nullopt;
    return JsonCursor(*it, m_file, m_path + "/" + std::string(key));
}

JsonCursor JsonCursor::at(std::size_t index) const
{
    requireArray();
    if (index >= m_value->size())
        fail("index " + std::to_string(index) + " is out of range");
    return JsonCursor((*m_value)[index], m_file, m_path + "/" + std::to_string(index));
}

std::size_t JsonCursor::size() const
{
    return m_value->is_array() || m_value->is_object() ? m_value->size() : 0;
}

void JsonCursor::fail(const std::string &message) const
{
    throw InputError(m_file, m_path.empty() ? "/" : m_path, message);
}

void JsonCursor::expected(const std::string &what) const
{
    fail("expected " + what + ", got " + describe(*m_value));
}

void JsonCursor::requireObject() const
{
    if (!m_value->is_object())
        expected("an object");
}

void JsonCursor::requireArray() const
{
    if (!m_value->is_array())
        expected("an array");
}

static std::string rangeText(double min, double max, bool integer)
{
    const std::string kind = integer ? "an integer" : "a number";
    const bool hasMin = std::isfinite(min) && min > -9e18;
    const bool hasMax = std::isfinite(max) && max < 9e18;
    if (hasMin && hasMax)
        return kind + " from " + formatNumber(min, 12) + " to " + formatNumber(max, 12);
    if (hasMin)
        return kind + " >= " + formatNumber(min, 12);
    if (hasMax)
        return kind + " <= " + formatNumber(max, 12);
    return kind;
}

std::int64_t JsonCursor::toInt(std::int64_t min, std::int64_t max) const
{
    const std::string want = rangeText(static_cast<double>(min), static_cast<double>(max), true);
    std::int64_t v = 0;
    if (m_value->is_number_unsigned()) {
        // Past int64's range (up to 2^64 - 1): get<std::int64_t>() would wrap to a negative.
        const auto u = m_value->get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            expected(want);
        v = static_cast<std::int64_t>(u);
    } else if (m_value->is_number_integer()) {
        v = m_value->get<std::int64_t>();
    } else if (m_value->is_number_float()) {
        const double d = m_value->get<double>();
        if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9e18)
            expected(want);
        v = static_cast<std::int64_t>(d);
    } else {
        expected(want);
    }
    if (v < min || v > max)
        expected(want);
    return v;
}

double JsonCursor::toDouble(double min, double max) const
{
    const std::string want = rangeText(min, max, false);
    if (!m_value->is_number())
        expected(want);
    const double v = m_value->get<double>();
    if (!std::isfinite(v) || v < min || v > max)
        expected(want);
    return v;
}

bool JsonCursor::toBool() const
{
    if (!m_value->is_boolean())
        expected("true or false");
    return m_value->get<bool>();
}

std::string JsonCursor::toString() const
{
    if (!m_value->is_string())
        expected("a string");
    return m_value->get<std::string>();
}

std::string JsonCursor::toChoice(const std::vector<std::string> &choices) const
{
    std::string list;
    for (std::size_t i = 0; i < choices.size(); ++i)
        list += (i ? (i + 1 == choices.size() ? " or \"" : ", \"") : "\"") + choices[i] + "\"";
    if (!m_value->is_string())
        expected("one of " + list);
    const std::string s = m_value->get<std::string>();
    for (const auto &c : choices)
        if (c == s)
            return s;
    expected("one of " + list);
}

int JsonCursor::intOr(std::string_view key, int fallback, int min, int max) const
{
    const auto c = find(key);
    return c ? static_cast<int>(c->toInt(min, max)) : fallback;
}

double JsonCursor::doubleOr(std::string_view key, double fallback, double min, double max) const
{
    const auto c = find(key);
    return c ? c->toDouble(min, max) : fallback;
}

bool JsonCursor::boolOr(std::string_view key, bool fallback) const
{
    const auto c = find(key);
    return c ? c->toBool() : fallback;
}

std::string JsonCursor::stringOr(std::string_view key, const std::string &fallback) const
{
    const auto c = find(key);
    return c ? c->toString() : fallback;
}

std::optional<int> JsonCursor::optInt(std::string_view key, int min, int max) const
{
    const auto c = find(key);
    if (!c)
        return std::nullopt;
    return static_cast<int>(c->toInt(min, max));
}

std::optional<double> JsonCursor::optDouble(std::string_view key, double min, double max) const
{
    const auto c = find(key);
    if (!c)
        return std::nullopt;
    return c->toDouble(min, max);
}

std::optional<bool> JsonCursor::optBool(std::string_view key) const
{
    const auto c = find(key);
    if (!c)
        return std::nullopt;
    return c->toBool();
}

std::string JsonCursor::describe(const Json &value)
{
    switch (value.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return value.get<bool>() ? "true" : "false";
    case Json::value_t::string:
        return "a string \"" + echo(value.get_ref<const std::string &>(), 20) + "\"";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float: return value.dump();
    case Json::value_t::object: return "an object";
    case Json::value_t::array: return "an array";
    default: return "an unexpected value";
    }
}

} // namespace railyard::engine
