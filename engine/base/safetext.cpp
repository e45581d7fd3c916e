#include "base/safetext.h"

namespace railyard::engine {

namespace {

constexpr char32_t kInvalid = 0xFFFFFFFF;
constexpr std::string_view kReplacement = "\xEF\xBF\xBD"; // U+FFFD

// The code point of the well-formed UTF-8 sequence at text[i] and its length, or kInvalid and 1
// (no overlong forms, surrogates or code points past U+10FFFF).
std::pair<char32_t, std::size_t> decode(std::string_view text, std::size_t i)
{
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char c = byte(i);
    if (c < 0x80)
        return {c, 1};
    std::size_t n = 0;
    char32_t cp = 0;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return {kInvalid, 1};
    }
    if (i + n > text.size())
        return {kInvalid, 1};
    for (std::size_t k = 1; k < n; ++k) {
        if ((byte(i + k) & 0xC0) != 0x80)
            return {kInvalid, 1};
        cp = (cp << 6) | (byte(i + k) & 0x3F);
    }
    const bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
    if (overlong || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
        return {kInvalid, 1};
    return {cp, n};
}

bool isControl(char32_t cp)
{
    return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E)
           || (cp >= 0x2066 && cp <= 0x2069);
}

bool isNonCharacter(char32_t cp)
{
    return cp == 0xFFFE || cp == 0xFFFF;
}

// Calls `f(cp, bytes)` for each code point of `text`, kInvalid for a byte that is not UTF-8.
template<class F>
void forEach(std::string_view text, F f)
{
    for (std::size_t i = 0; i < text.size();) {
        const auto [cp, n] = decode(text, i);
        f(cp, text.substr(i, n));
        i += n;
    }
}

// plainText()'s rule for one code point.
void appendPlain(std::string &out, char32_t cp, std::string_view bytes)
{
    if (cp == '\n' || cp == '\r' || cp == '\t' || cp == 0x2028 || cp == 0x2029)
        out += ' ';
    else if (cp == kInvalid || isControl(cp) || isNonCharacter(cp))
        out += kReplacement;
    else
        out += bytes;
}

} // namespace

namespace {

std::string terminal(std::string_view text, bool lines)
{
    static const char *hex = "0123456789ABCDEF";
    std::string out;
    out.reserve(text.size());
    forEach(text, [&](char32_t cp, std::string_view bytes) {
        if ((cp != kInvalid && !isControl(cp)) || (lines && cp == '\n')) {
            out += bytes;
            return;
        }
        for (const char ch : bytes) {
            const auto c = static_cast<unsigned char>(ch);
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    });
    return out;
}

} // namespace

std::string terminalText(std::string_view text)
{
    return terminal(text, false);
}

std::string terminalLines(std::string_view text)
{
    return terminal(text, true);
}

std::string xmlText(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    forEach(text, [&](char32_t cp, std::string_view bytes) {
        switch (cp) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&apos;"; break;
        default:
            if (cp == kInvalid || isControl(cp) || isNonCharacter(cp))
                out += kReplacement;
            else
                out += bytes;
        }
    });
    return out;
}

std::string plainText(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    forEach(text, [&](char32_t cp, std::string_view bytes) { appendPlain(out, cp, bytes); });
    return out;
}

std::string markdownText(std::string_view text)
{
    static constexpr std::string_view special = "\\`*_[]<>|#!~&";
    std::string out;
    out.reserve(text.size() + 8);
    forEach(text, [&](char32_t cp, std::string_view bytes) {
        if (cp < 0x80 && special.find(static_cast<char>(cp)) != std::string_view::npos) {
            out += '\\';
            out += static_cast<char>(cp);
        } else {
            appendPlain(out, cp, bytes);
        }
    });
    return out;
}

void appendCsvText(std::string &out, std::string_view text)
{
    std::string field;
    field.reserve(text.size() + 1);
    if (!text.empty() && std::string_view("=+-@\t\r").find(text.front()) != std::string_view::npos)
        field += '\'';
    forEach(text, [&](char32_t cp, std::string_view bytes) {
        const bool kept = cp == '\t' || cp == '\n' || cp == '\r';
        if (cp == kInvalid || ((isControl(cp) || isNonCharacter(cp)) && !kept))
            field += kReplacement;
        else
            field += bytes;
    });
    if (field.find_first_of(",\"\r\n") == std::string::npos) {
        out += field;
        return;
    }
    out += '"';
    for (const char c : field) {
        if (c == '"')
            out += '"';
        out += c;
    }
    out += '"';
}

std::string jsonForTerminal(std::string json)
{
    // The control characters JSON allows raw: DEL, C1 (2 bytes), the bidirectional ones (3).
    const auto controlAt = [&](std::size_t i) -> std::pair<char32_t, std::size_t> {
        const auto [cp, n] = decode(json, i);
        if (cp != kInvalid && cp >= 0x7F && isControl(cp))
            return {cp, n};
        return {0, n};
    };
    std::size_t i = 0;
    for (; i < json.size(); ++i)
        if (static_cast<unsigned char>(json[i]) >= 0x7F && controlAt(i).first)
            break;
    if (i == json.size())
        return json; // the usual case: nothing to change, no copy
    static const char *hex = "0123456789abcdef";
    std::string out = json.substr(0, i);
    out.reserve(json.size() + 16);
    while (i < json.size()) {
        const auto [cp, n] = controlAt(i);
        if (!cp) {
            out.append(json, i, n);
        } else {
            out += "\\u";
            for (int shift = 12; shift >= 0; shift -= 4)
                out += hex[(cp >> shift) & 15];
        }
        i += n;
    }
    return out;
}

} // namespace railyard::engine
