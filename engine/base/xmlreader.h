#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace railyard::engine {

// The XML reader of NCCL's topology and graph files, on expat: elements and attributes (with
// XML's five predefined entities and character references resolved), comments and the XML
// declaration. Text content is skipped. A DTD (so any entity declaration: no entity expansion
// can happen, billion laughs or external), CDATA and processing instructions are refused, and
// so are bytes that are not UTF-8. Bounded: at most kMaxXmlDepth levels, kMaxXmlElements
// elements, kMaxXmlAttributes attributes per element, kMaxXmlValueBytes per value and 256 bytes
// per name. (The importer bounds the file's size before parsing: kMaxImportBytes.)
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
