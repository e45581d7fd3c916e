#include "base/jsonvalue.h"

#include <nlohmann/json.hpp>

namespace railyard::engine {

JsonValue::JsonValue()
    : m_value(std::make_unique<Json>(Json::object()))
{}

JsonValue::JsonValue(const Json &value)
    : m_value(std::make_unique<Json>(value))
{}

JsonValue::JsonValue(Json &&value)
    : m_value(std::make_unique<Json>(std::move(value)))
{}

JsonValue::JsonValue(const JsonValue &other)
    : m_value(std::make_unique<Json>(other.get()))
{}

// A moved-from JsonValue holds an empty object, never null, so get() stays safe.
JsonValue::JsonValue(JsonValue &&other) noexcept
    : m_value(std::make_unique<Json>(std::move(*other.m_value)))
{}

JsonValue &JsonValue::operator=(const JsonValue &other)
{
    if (this != &other)
        *m_value = other.get();
    return *this;
}

JsonValue &JsonValue::operator=(JsonValue &&other) noexcept
{
    if (this != &other)
        std::swap(m_value, other.m_value);
    return *this;
}

JsonValue &JsonValue::operator=(const Json &value)
{
    *m_value = value;
    return *this;
}

JsonValue &JsonValue::operator=(Json &&value)
{
    *m_value = std::move(value);
    return *this;
}

JsonValue::~JsonValue() = default;

const Json &JsonValue::get() const
{
    return *m_value;
}

Json &JsonValue::get()
{
    return *m_value;
}

bool JsonValue::operator==(const JsonValue &other) const
{
    return *m_value == *other.m_value;
}

} // namespace railyard::engine
