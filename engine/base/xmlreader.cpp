#include "base/xmlreader.h"

#include "base/inputerror.h"

#include <expat.h>

#include <algorithm>
#include <climits>
#include <cstring>

namespace railyard::engine {

const std::string *XmlElement::attribute(std::string_view key) const
{
    for (const auto &[k, v] : attributes)
        if (k == key)
            return &v;
    return nullptr;
}

std::string XmlElement::attributeOr(std::string_view key, const std::string &fallback) const
{
    const std::string *v = attribute(key);
    return v ? *v : fallback;
}

namespace {

constexpr std::size_t kMaxXmlNameBytes = 256;

// The length of the UTF-8 sequence at `s` (1 to 4), or 0 when it is not one (overlong forms,
// surrogates and code points past U+10FFFF included).
std::size_t utf8Length(std::string_view s)
{
    const auto at = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
    const auto tail = [&](std::size_t i, unsigned lo = 0x80, unsigned hi = 0xBF) {
        return i < s.size() && at(i) >= lo && at(i) <= hi;
    };
    if (s.empty())
        return 0;
    const unsigned c = at(0);
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        return tail(1) ? 1 + 1 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        const bool second = c == 0xE0 ? tail(1, 0xA0) : c == 0xED ? tail(1, 0x80, 0x9F) : tail(1);
        return second && tail(2) ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        const bool second = c == 0xF0 ? tail(1, 0x90) : c == 0xF4 ? tail(1, 0x80, 0x8F) : tail(1);
        return second && tail(2) && tail(3) ? 4 : 0;
    }
    return 0;
}

// Builds the element tree from expat's callbacks and turns expat's errors, and the limits this
// reader adds, into an InputError naming the file, the line and the column.
class XmlReader
{
public:
    XmlReader(std::string_view text, const std::string &file)
        : m_text(text)
        , m_file(file)
        , m_parser(XML_ParserCreate("UTF-8"))
    {
        if (!m_parser)
            throw InputError(m_file, "", "cannot read XML: out of memory");
        XML_SetUserData(m_parser, this);
        XML_SetElementHandler(m_parser, &XmlReader::onStart, &XmlReader::onEnd);
        // No DTD, so no entity can be declared, let alone expanded (billion laughs, external
        // entities): the first <!DOCTYPE stops the parse. Parameter entities are never parsed.
        XML_SetParamEntityParsing(m_parser, XML_PARAM_ENTITY_PARSING_NEVER);
        XML_SetStartDoctypeDeclHandler(m_parser, &XmlReader::onDoctype);
        XML_SetEntityDeclHandler(m_parser, &XmlReader::onEntity);
        XML_SetProcessingInstructionHandler(m_parser, &XmlReader::onInstruction);
        XML_SetStartCdataSectionHandler(m_parser, &XmlReader::onCdata);
    }
    ~XmlReader() { XML_ParserFree(m_parser); }
    XmlReader(const XmlReader &) = delete;
    XmlReader &operator=(const XmlReader &) = delete;

    XmlElement document()
    {
        // Blank lines before the XML declaration are read as before expat (which refuses
        // them): skipped, and counted into every line and column given.
        std::size_t start = m_text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
        const std::size_t first = m_text.find_first_not_of(" \t\r\n", start);
        if (first != std::string_view::npos && first > start && m_text.substr(first, 5) == "<?xml") {
            const std::string_view skipped = m_text.substr(0, first);
            m_lineOffset = static_cast<int>(std::count(skipped.begin(), skipped.end(), '\n'));
            m_columnOffset = static_cast<int>(first - (skipped.find_last_of('\n') + 1));
            start = first;
        }
        m_base = start;
        std::string_view rest = m_text.substr(start);
        do {
            const std::size_t n = std::min<std::size_t>(rest.size(), INT_MAX / 2);
            const bool last = n == rest.size();
            if (XML_Parse(m_parser, rest.data(), static_cast<int>(n), last) != XML_STATUS_OK)
                failParse();
            rest.remove_prefix(n);
        } while (!rest.empty());
        return std::move(m_root);
    }

private:
    static XmlReader &self(void *user) { return *static_cast<XmlReader *>(user); }

    std::string here() const
    {
        const int line = static_cast<int>(XML_GetCurrentLineNumber(m_parser));
        int column = static_cast<int>(XML_GetCurrentColumnNumber(m_parser)) + 1;
        if (line == 1)
            column += m_columnOffset;
        return "line " + std::to_string(line + m_lineOffset) + ", column " + std::to_string(column);
    }
    int lineHere() const
    {
        return static_cast<int>(XML_GetCurrentLineNumber(m_parser)) + m_lineOffset;
    }

    // From a callback: stops the parse with `message` at the current event.
    void refuse(const std::string &message)
    {
        if (m_stopped.empty()) {
            m_stopped = message;
            m_stoppedAt = here();
        }
        XML_StopParser(m_parser, XML_FALSE);
    }

    // The text at expat's current event (where an error was found).
    std::string_view atError() const
    {
        const XML_Index i = XML_GetCurrentByteIndex(m_parser);
        if (i < 0 || m_base + static_cast<std::size_t>(i) > m_text.size())
            return {};
        return m_text.substr(m_base + static_cast<std::size_t>(i));
    }

    // The name at the start of `s` (up to whitespace, '>', '/', '=' or ';').
    static std::string_view leadingName(std::string_view s)
    {
        const std::size_t end = std::min(s.find_first_of(" \t\r\n>/=;&<\"'"), kMaxXmlNameBytes);
        return s.substr(0, std::min(end, s.size()));
    }

    // The first reference in `s` to an entity other than XML's five (expat points at the
    // start of the tag or text that holds it).
    static std::string_view undefinedEntity(std::string_view s)
    {
        for (std::size_t amp = s.find('&'); amp != std::string_view::npos;
             amp = s.find('&', amp + 1)) {
            const std::string_view name = leadingName(s.substr(amp + 1));
            if (!name.empty() && name[0] != '#' && name != "amp" && name != "lt" && name != "gt"
                && name != "quot" && name != "apos")
                return name;
        }
        return {};
    }

    [[noreturn]] void failParse() const
    {
        if (!m_stopped.empty())
            throw InputError(m_file, m_stoppedAt, m_stopped);
        throw InputError(m_file, here(), explain(XML_GetErrorCode(m_parser)));
    }

    std::string explain(XML_Error code) const
    {
        const std::string_view at = atError();
        // Bytes that are not UTF-8 show as an invalid token at (or just before) the first one.
        for (std::size_t i = 0; i < std::min<std::size_t>(at.size(), 8);) {
            const std::size_t n = utf8Length(at.substr(i));
            if (n == 0)
                return "a byte that is not UTF-8 (" + terminalText(at.substr(i, 1))
                       + "); save the file as UTF-8 text";
            i += n;
        }
        if (m_root.name.empty() && !at.empty() && at[0] != '<'
            && (code == XML_ERROR_SYNTAX || code == XML_ERROR_INVALID_TOKEN))
            return "expected '<' starting the root element, got " + quote(at.substr(0, 1));
        switch (code) {
        case XML_ERROR_NO_ELEMENTS:
            if (!m_open.empty())
                return "<" + m_open.back()->name + "> (line " + std::to_string(m_open.back()->line)
                       + ") is never closed: the file is cut short";
            return "no root element: the file holds no XML element";
        case XML_ERROR_UNCLOSED_TOKEN:
        case XML_ERROR_PARTIAL_CHAR:
            return "the file is cut short inside a tag, a comment or a value";
        case XML_ERROR_TAG_MISMATCH: {
            // expat points at the name after "</".
            const std::string end(leadingName(at.substr(at.substr(0, 2) == "</" ? 2 : 0)));
            if (m_open.empty())
                return "</" + echo(end) + "> closes no element";
            return "</" + echo(end) + "> closes <" + m_open.back()->name + "> opened on line "
                   + std::to_string(m_open.back()->line);
        }
        case XML_ERROR_UNDEFINED_ENTITY:
        case XML_ERROR_ENTITY_DECLARED_IN_PE: {
            const std::string_view ref = undefinedEntity(at);
            return "the entity &" + echo(ref)
                   + "; is not one of XML's five (&amp; &lt; &gt; &quot; &apos;); entities are "
                     "not expanded";
        }
        case XML_ERROR_BAD_CHAR_REF: return "a character reference to an invalid code point";
        case XML_ERROR_DUPLICATE_ATTRIBUTE: return "an attribute appears twice in one element";
        case XML_ERROR_JUNK_AFTER_DOC_ELEMENT:
            return "text after the root element </" + m_root.name + ">";
        case XML_ERROR_MISPLACED_XML_PI:
            return "an XML declaration <?xml ...?> after the start of the file";
        case XML_ERROR_INCORRECT_ENCODING:
        case XML_ERROR_UNKNOWN_ENCODING:
            return "the XML declaration names an encoding other than UTF-8; save the file as "
                   "UTF-8 text";
        default: return std::string("not well-formed XML (expat: ") + XML_ErrorString(code) + ")";
        }
    }

    static void XMLCALL onStart(void *user, const XML_Char *name, const XML_Char **atts)
    {
        XmlReader &r = self(user);
        if (!r.m_stopped.empty())
            return;
        if (r.m_open.size() + 1 > static_cast<std::size_t>(kMaxXmlDepth))
            return r.refuse("elements nested deeper than " + std::to_string(kMaxXmlDepth)
                            + " levels");
        if (++r.m_elements > kMaxXmlElements)
            return r.refuse("more than " + std::to_string(kMaxXmlElements) + " elements");
        XmlElement e;
        e.name = name;
        if (e.name.size() > kMaxXmlNameBytes)
            return r.refuse("a name longer than " + std::to_string(kMaxXmlNameBytes)
                            + " characters");
        e.line = r.lineHere();
        for (const XML_Char **a = atts; a[0]; a += 2) {
            if (e.attributes.size() >= kMaxXmlAttributes)
                return r.refuse("more than " + std::to_string(kMaxXmlAttributes)
                                + " attributes in <" + e.name + ">");
            if (std::strlen(a[0]) > kMaxXmlNameBytes)
                return r.refuse("a name longer than " + std::to_string(kMaxXmlNameBytes)
                                + " characters");
            if (std::strlen(a[1]) > kMaxXmlValueBytes)
                return r.refuse("an attribute value longer than "
                                + std::to_string(kMaxXmlValueBytes) + " bytes");
            e.attributes.emplace_back(a[0], a[1]);
        }
        if (r.m_open.empty()) {
            r.m_root = std::move(e);
            r.m_open.push_back(&r.m_root);
        } else {
            // Only the open elements are pointed to, and only the innermost one's children
            // grow: the pointers stay valid.
            auto &siblings = r.m_open.back()->children;
            siblings.push_back(std::move(e));
            r.m_open.push_back(&siblings.back());
        }
    }
    static void XMLCALL onEnd(void *user, const XML_Char *)
    {
        // After a refused start tag expat may still report its end (<a/>): nothing was opened.
        XmlReader &r = self(user);
        if (r.m_stopped.empty())
            r.m_open.pop_back();
    }
    static void XMLCALL
    onDoctype(void *user, const XML_Char *, const XML_Char *, const XML_Char *, int)
    {
        self(user).refuse("a DTD (<!DOCTYPE or <!ENTITY): NCCL topology files have none, and "
                          "entity definitions are refused");
    }
    static void XMLCALL onEntity(void *user,
                                 const XML_Char *,
                                 int,
                                 const XML_Char *,
                                 int,
                                 const XML_Char *,
                                 const XML_Char *,
                                 const XML_Char *,
                                 const XML_Char *)
    {
        self(user).refuse("an entity definition (<!ENTITY): entities are refused");
    }
    static void XMLCALL onInstruction(void *user, const XML_Char *, const XML_Char *)
    {
        self(user).refuse("a processing instruction <?...?>: not expected in an NCCL file");
    }
    static void XMLCALL onCdata(void *user)
    {
        self(user).refuse("a CDATA section: not expected in an NCCL file");
    }

    std::string_view m_text;
    const std::string &m_file;
    XML_Parser m_parser;
    std::size_t m_base = 0; // where expat's input starts in m_text
    int m_lineOffset = 0;   // lines skipped before the XML declaration
    int m_columnOffset = 0; // and columns on its line
    XmlElement m_root;
    std::vector<XmlElement *> m_open; // the open elements, the root first
    std::size_t m_elements = 0;
    std::string m_stopped; // why a callback stopped the parse, and where
    std::string m_stoppedAt;
};

} // namespace

XmlElement parseXml(std::string_view text, const std::string &file)
{
    return XmlReader(text, file).document();
}

} // namespace railyard::engine
