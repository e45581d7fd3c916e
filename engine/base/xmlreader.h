#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace railyard::engine {

// A small XML reader for NCCL's topology and graph files: elements, attributes, comments,
// the XML declaration, the five predefined entities and character references. Text content is
// skipped. DTDs, other entities, CDATA and processing instructions are refused (no entity
// expansion can happen). Bounded: at most kMaxXmlDepth levels, kMaxXmlElements elements,
// kMaxXmlAttributes attributes per element and kMaxXmlValueBytes per value.
inline constexpr int kMaxXmlDepth = 64;
inline constexpr std::size_t kMaxXmlElements = 200000;
inline constexpr std::size_t kMaxXmlAttributes = 64;
inline constexpr std::size_t kMaxXmlValueBytes = 4096;

struct XmlElement
{
    std::string name;
    std::vector<std::pair<std::string, std::string>> attributes;
    std::vector<XmlElement> children;
    int line = 0;

    // The attribute's value, or nullptr.
    const std::string *attribute(std::string_view key) const;
    std::string attributeOr(std::string_view key, const std::string &fallback = {}) const;
};

// Parses `text`; throws InputError naming `file`, the line and column, and what was expected.
XmlElement parseXml(std::string_view text, const std::string &file);

} // namespace railyard::engine
