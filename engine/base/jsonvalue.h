#pragma once

// The JSON types by name only. nlohmann/json.hpp costs about 1.5 s of compile time in every file
// that includes it (half of an engine file's compile), so headers that only name a Json (a
// function's argument or result) or hold one (JsonValue) include this, and the files that build
// or read JSON include base/jsoncursor.h.

#include <nlohmann/json_fwd.hpp>

#include <memory>

namespace railyard::engine {

// Documents keep their key order so a saved file reads like the one the user wrote.
using Json = nlohmann::ordered_json;

class JsonCursor;

// A JSON value held by a type whose header should not include nlohmann/json.hpp (a layout's view
// state and the document as read, a report's extra keys). A value: copies are deep; it is never
// null (an empty object by default). Reading or changing it needs base/jsoncursor.h.
class JsonValue
{
public:
    JsonValue(); // an empty object
    JsonValue(const Json &value);
    JsonValue(Json &&value);
    JsonValue(const JsonValue &other);
    JsonValue(JsonValue &&other) noexcept;
    JsonValue &operator=(const JsonValue &other);
    JsonValue &operator=(JsonValue &&other) noexcept;
    JsonValue &operator=(const Json &value);
    JsonValue &operator=(Json &&value);
    ~JsonValue();

    const Json &get() const;
    Json &get();

    bool operator==(const JsonValue &other) const;

private:
    std::unique_ptr<Json> m_value;
};

} // namespace railyard::engine
