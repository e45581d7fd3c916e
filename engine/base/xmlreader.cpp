#include "base/xmlreader.h"

#include "base/inputerror.h"

#include <cstdint>

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

class XmlParser
{
public:
    XmlParser(std::string_view text, const std::string &file)
        : m_text(text)
        , m_file(file)
    {}

    XmlElement document()
    {
        if (m_text.substr(0, 3) == "\xEF\xBB\xBF")
            m_pos = 3;
        skipMisc(true);
        if (atEnd())
            fail("no root element: the file holds no XML element");
        if (peek() != '<')
            fail("expected '<' starting the root element, got " + quote(m_text.substr(m_pos, 1)));
        XmlElement root = element(1);
        skipMisc(false);
        if (!atEnd())
            fail("text after the root element </" + root.name + ">");
        return root;
    }

private:
    bool atEnd() const { return m_pos >= m_text.size(); }
    char peek(std::size_t ahead = 0) const
    {
        return m_pos + ahead < m_text.size() ? m_text[m_pos + ahead] : '\0';
    }
    bool startsWith(std::string_view s) const { return m_text.substr(m_pos, s.size()) == s; }

    std::string where() const
    {
        int line = 1;
        std::size_t lineStart = 0;
        for (std::size_t i = 0; i < m_pos && i < m_text.size(); ++i)
            if (m_text[i] == '\n') {
                ++line;
                lineStart = i + 1;
            }
        return "line " + std::to_string(line) + ", column " + std::to_string(m_pos - lineStart + 1);
    }
    int lineNow()
    {
        // Incremental line count for element positions.
        for (; m_counted < m_pos && m_counted < m_text.size(); ++m_counted)
            if (m_text[m_counted] == '\n')
                ++m_line;
        return m_line;
    }
    [[noreturn]] void fail(const std::string &message) const
    {
        throw InputError(m_file, where(), message);
    }

    static bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
    static bool nameChar(char c)
    {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
               || c == '_' || c == '-' || c == '.' || c == ':'
               || static_cast<unsigned char>(c) >= 0x80;
    }
    void skipSpace()
    {
        while (!atEnd() && space(peek()))
            ++m_pos;
    }

    void comment()
    {
        const std::size_t end = m_text.find("-->", m_pos + 4);
        if (end == std::string_view::npos)
            fail("a comment <!-- is never closed with -->");
        m_pos = end + 3;
    }

    // Whitespace, comments, and (in the prolog) the XML declaration. Refuses DTDs and PIs.
    void skipMisc(bool prolog)
    {
        for (;;) {
            skipSpace();
            if (startsWith("<!--")) {
                comment();
            } else if (startsWith("<?xml") && prolog && (space(peek(5)) || peek(5) == '?')) {
                const std::size_t end = m_text.find("?>", m_pos);
                if (end == std::string_view::npos)
                    fail("the XML declaration <?xml is never closed with ?>");
                m_pos = end + 2;
                prolog = false;
            } else if (startsWith("<!DOCTYPE") || startsWith("<!ENTITY")) {
                fail("a DTD (<!DOCTYPE or <!ENTITY): NCCL topology files have none, and entity "
                     "definitions are refused");
            } else if (startsWith("<?")) {
                fail("a processing instruction <?...?>: not expected in an NCCL file");
            } else {
                return;
            }
        }
    }

    std::string name()
    {
        const std::size_t b = m_pos;
        while (!atEnd() && nameChar(peek()))
            ++m_pos;
        if (m_pos == b)
            fail("expected a name, got " + quote(m_text.substr(m_pos, 1)));
        if (m_pos - b > 256)
            fail("a name longer than 256 characters");
        return std::string(m_text.substr(b, m_pos - b));
    }

    void appendUtf8(std::string &out, std::uint32_t cp)
    {
        if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            fail("a character reference to an invalid code point");
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        }
    }

    // At '&': appends the referenced character.
    void reference(std::string &out)
    {
        const std::size_t semi = m_text.find(';', m_pos);
        if (semi == std::string_view::npos || semi - m_pos > 12)
            fail("'&' that starts no entity reference (write &amp;)");
        const std::string_view ref = m_text.substr(m_pos + 1, semi - m_pos - 1);
        if (ref == "amp")
            out += '&';
        else if (ref == "lt")
            out += '<';
        else if (ref == "gt")
            out += '>';
        else if (ref == "quot")
            out += '"';
        else if (ref == "apos")
            out += '\'';
        else if (ref.size() >= 2 && ref[0] == '#') {
            const bool hex = ref[1] == 'x';
            std::uint32_t cp = 0;
            const std::string_view digits = ref.substr(hex ? 2 : 1);
            if (digits.empty())
                fail("an empty character reference");
            for (char c : digits) {
                int v = -1;
                if (c >= '0' && c <= '9')
                    v = c - '0';
                else if (hex && c >= 'a' && c <= 'f')
                    v = c - 'a' + 10;
                else if (hex && c >= 'A' && c <= 'F')
                    v = c - 'A' + 10;
                if (v < 0)
                    fail("a malformed character reference &" + echo(ref) + ";");
                cp = cp * (hex ? 16 : 10) + static_cast<std::uint32_t>(v);
                if (cp > 0x10FFFF)
                    fail("a character reference beyond U+10FFFF");
            }
            appendUtf8(out, cp);
        } else {
            fail("the entity &" + echo(ref)
                 + "; is not one of XML's five (&amp; &lt; &gt; &quot; &apos;); entities are not "
                   "expanded");
        }
        m_pos = semi + 1;
    }

    std::string attributeValue()
    {
        const char q = peek();
        if (q != '"' && q != '\'')
            fail("expected a quoted attribute value");
        ++m_pos;
        std::string v;
        for (;;) {
            if (atEnd())
                fail("an attribute value is never closed");
            const char c = peek();
            if (c == q)
                break;
            if (c == '<')
                fail("'<' inside an attribute value");
            if (c == '&')
                reference(v);
            else {
                v += c;
                ++m_pos;
            }
            if (v.size() > kMaxXmlValueBytes)
                fail("an attribute value longer than " + std::to_string(kMaxXmlValueBytes)
                     + " bytes");
        }
        ++m_pos;
        return v;
    }

    // At '<' of a start tag.
    XmlElement element(int depth)
    {
        if (depth > kMaxXmlDepth)
            fail("elements nested deeper than " + std::to_string(kMaxXmlDepth) + " levels");
        if (++m_elements > kMaxXmlElements)
            fail("more than " + std::to_string(kMaxXmlElements) + " elements");
        XmlElement e;
        e.line = lineNow();
        ++m_pos; // '<'
        e.name = name();
        for (;;) {
            const std::size_t before = m_pos;
            skipSpace();
            if (startsWith("/>")) {
                m_pos += 2;
                return e;
            }
            if (peek() == '>') {
                ++m_pos;
                break;
            }
            if (atEnd())
                fail("the tag <" + e.name + " is never closed");
            if (m_pos == before)
                fail("expected whitespace, '>' or '/>' in <" + e.name + ">");
            std::string key = name();
            skipSpace();
            if (peek() != '=')
                fail("expected '=' after the attribute " + quote(key));
            ++m_pos;
            skipSpace();
            std::string value = attributeValue();
            if (e.attribute(key))
                fail("the attribute " + quote(key) + " appears twice in <" + e.name + ">");
            if (e.attributes.size() >= kMaxXmlAttributes)
                fail("more than " + std::to_string(kMaxXmlAttributes) + " attributes in <" + e.name
                     + ">");
            e.attributes.emplace_back(std::move(key), std::move(value));
        }
        // Content: child elements, comments and text (skipped, references checked).
        for (;;) {
            if (atEnd())
                fail("<" + e.name + "> (line " + std::to_string(e.line)
                     + ") is never closed: the file is cut short");
            if (startsWith("</")) {
                m_pos += 2;
                const std::string end = name();
                if (end != e.name)
                    fail("</" + end + "> closes <" + e.name + "> opened on line "
                         + std::to_string(e.line));
                skipSpace();
                if (peek() != '>')
                    fail("expected '>' after </" + end);
                ++m_pos;
                return e;
            }
            if (startsWith("<!--")) {
                comment();
            } else if (startsWith("<![CDATA[")) {
                fail("a CDATA section: not expected in an NCCL file");
            } else if (startsWith("<!") || startsWith("<?")) {
                fail("a declaration or processing instruction inside <" + e.name + ">");
            } else if (peek() == '<') {
                e.children.push_back(element(depth + 1));
            } else if (peek() == '&') {
                std::string ignored;
                reference(ignored);
            } else {
                ++m_pos;
            }
        }
    }

    std::string_view m_text;
    const std::string &m_file;
    std::size_t m_pos = 0;
    std::size_t m_counted = 0;
    int m_line = 1;
    std::size_t m_elements = 0;
};

} // namespace

XmlElement parseXml(std::string_view text, const std::string &file)
{
    return XmlParser(text, file).document();
}

} // namespace railyard::engine
