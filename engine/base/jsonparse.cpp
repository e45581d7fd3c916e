// parseJsonText: nlohmann's parser driven through a SAX handler that builds the document with
// limits (depth, duplicate keys) and turns every error into an InputError with line and column.
#include "base/jsoncursor.h"

#include "base/units.h"

#include <cstring>
#include <iterator>
#include <optional>
#include <unordered_map>

namespace railyard::engine {

namespace {

// A text position for messages: "line 3, column 7". Columns count characters (UTF-8 sequences),
// as editors do, from 1.
std::string placeOf(const std::string &text, std::size_t offset)
{
    offset = std::min(offset, text.size());
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i < offset; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == '\n') {
            ++line;
            column = 1;
        } else if ((c & 0xC0) != 0x80) {
            ++column;
        }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// A key as a JSON Pointer segment ("/" and "~" escaped), shortened for a message.
std::string pointerSegment(std::string_view key)
{
    std::string s;
    for (const char c : key.substr(0, 4 * kEchoKeep)) {
        if (c == '~')
            s += "~0";
        else if (c == '/')
            s += "~1";
        else
            s += c;
    }
    return "/" + echo(s, 12);
}

// Reads the text one character at a time for nlohmann's lexer, counting what it has consumed,
// so the SAX handler knows where in the text each event happens.
class CountingIterator
{
public:
    using iterator_category = std::input_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char *;
    using reference = const char &;

    CountingIterator(const char *p, std::size_t *consumed)
        : m_p(p)
        , m_consumed(consumed)
    {}
    reference operator*() const { return *m_p; }
    CountingIterator &operator++()
    {
        ++m_p;
        ++*m_consumed;
        return *this;
    }
    CountingIterator operator++(int)
    {
        CountingIterator old = *this;
        ++*this;
        return old;
    }
    bool operator==(const CountingIterator &o) const { return m_p == o.m_p; }
    bool operator!=(const CountingIterator &o) const { return m_p != o.m_p; }

private:
    const char *m_p;
    std::size_t *m_consumed;
};

// Builds the document from nlohmann's SAX events (its own DOM builder has no depth limit and
// lets a later duplicate key silently replace the first). Refuses nesting deeper than
// kMaxJsonDepth, so nothing recursive that later walks the document (copy, compare, dump) can
// overflow the stack, and refuses duplicate keys. Every error names the line and column.
class DomBuilder
{
public:
    DomBuilder(const std::string &text, const std::string &file, const std::size_t &consumed)
        : m_text(text)
        , m_file(file)
        , m_consumed(consumed)
    {}

    Json take() { return std::move(m_root); }

    bool null() { return add(Json(nullptr)); }
    bool boolean(bool v) { return add(Json(v)); }
    bool number_integer(Json::number_integer_t v) { return add(Json(v)); }
    bool number_unsigned(Json::number_unsigned_t v) { return add(Json(v)); }
    bool number_float(Json::number_float_t v, const Json::string_t &) { return add(Json(v)); }
    bool string(Json::string_t &v) { return add(Json(std::move(v))); }
    bool binary(Json::binary_t &v) { return add(Json(std::move(v))); }
    bool start_object(std::size_t) { return open(Json::object()); }
    bool start_array(std::size_t) { return open(Json::array()); }
    bool end_object() { return close(); }
    bool end_array() { return close(); }
    bool key(Json::string_t &key);
    bool parse_error(std::size_t position,
                     const std::string &lastToken,
                     const nlohmann::detail::exception &e);

private:
    struct Frame
    {
        Json *value;
        // Objects: where each member's key starts in the text, and (past a few members) the
        // members by key hash, so a large object is checked for duplicates in linear time.
        std::vector<std::size_t> keyOffsets;
        std::unordered_multimap<std::size_t, std::size_t> byHash;
    };
    static constexpr std::size_t kLinearKeys = 16;

    [[noreturn]] void fail(std::size_t offset, const std::string &message) const
    {
        throw InputError(m_file, placeOf(m_text, offset), message);
    }
    void count(); // one more value: refuses more than kMaxJsonValues
    bool add(Json &&v);
    bool open(Json &&container);
    bool close()
    {
        m_stack.pop_back();
        return true;
    }
    // The JSON path of the innermost container, and with `pending` the slot its next value
    // goes to.
    std::string path(bool pending) const;
    std::size_t keyStart(std::size_t end) const;

    const std::string &m_text;
    const std::string &m_file;
    const std::size_t &m_consumed; // characters the lexer has read
    Json m_root;
    std::vector<Frame> m_stack;
    Json *m_member = nullptr; // the object member whose key was read last
    std::size_t m_values = 0;
};

void DomBuilder::count()
{
    if (++m_values > kMaxJsonValues)
        fail(m_consumed > 0 ? m_consumed - 1 : 0,
             "more than " + std::to_string(kMaxJsonValues)
                     + " values (numbers, strings, objects, arrays); a layout holds far fewer");
}

bool DomBuilder::add(Json &&v)
{
    count();
    if (m_stack.empty()) {
        m_root = std::move(v);
        return true;
    }
    Json &top = *m_stack.back().value;
    if (top.is_array())
        top.get_ref<Json::array_t &>().push_back(std::move(v));
    else
        *m_member = std::move(v);
    return true;
}

bool DomBuilder::open(Json &&container)
{
    count();
    if (m_stack.size() >= static_cast<std::size_t>(kMaxJsonDepth))
        fail(m_consumed - 1,
             "objects and arrays nested deeper than " + std::to_string(kMaxJsonDepth)
                     + " levels, at " + echo(path(true), 40)
                     + " (a layout nests a few levels; expected at most "
                     + std::to_string(kMaxJsonDepth) + ")");
    Json *slot = nullptr;
    if (m_stack.empty()) {
        m_root = std::move(container);
        slot = &m_root;
    } else if (Json &top = *m_stack.back().value; top.is_array()) {
        auto &a = top.get_ref<Json::array_t &>();
        a.push_back(std::move(container));
        slot = &a.back();
    } else {
        *m_member = std::move(container);
        slot = m_member;
    }
    m_stack.push_back({slot, {}, {}});
    return true;
}

std::string DomBuilder::path(bool pending) const
{
    std::string p;
    for (std::size_t i = 0; i < m_stack.size(); ++i) {
        const bool innermost = i + 1 == m_stack.size();
        if (innermost && !pending)
            break;
        const Json &v = *m_stack[i].value;
        if (v.is_object()) {
            const auto &o = v.get_ref<const Json::object_t &>();
            if (!o.empty())
                p += pointerSegment(o.back().first);
        } else {
            const std::size_t n = v.size();
            p += "/" + std::to_string(innermost ? n : n - 1);
        }
    }
    return p.empty() ? "/" : p;
}

std::size_t DomBuilder::keyStart(std::size_t end) const
{
    // `end` is just past the key's closing quote; a JSON string holds no raw newline and no
    // unescaped quote, so the opening quote is the nearest one before it not escaped.
    if (end < 2 || end > m_text.size())
        return end > 0 ? end - 1 : 0;
    for (std::size_t j = end - 1; j-- > 0;) {
        if (m_text[j] == '\n')
            break;
        if (m_text[j] != '"')
            continue;
        std::size_t slashes = 0;
        while (slashes < j && m_text[j - 1 - slashes] == '\\')
            ++slashes;
        if (slashes % 2 == 0)
            return j;
    }
    return end - 1;
}

bool DomBuilder::key(Json::string_t &key)
{
    Frame &top = m_stack.back();
    // The members as the vector ordered_map is (its own operator[] takes a key).
    auto &members = static_cast<Json::object_t::Container &>(top.value->get_ref<Json::object_t &>());
    const std::size_t start = keyStart(m_consumed);
    const std::size_t hash = std::hash<std::string>{}(key);
    std::optional<std::size_t> first;
    if (members.size() < kLinearKeys) {
        for (std::size_t i = 0; i < members.size() && !first; ++i)
            if (members[i].first == key)
                first = i;
    } else {
        if (top.byHash.empty())
            for (std::size_t i = 0; i < members.size(); ++i)
                top.byHash.emplace(std::hash<std::string>{}(members[i].first), i);
        const auto [lo, hi] = top.byHash.equal_range(hash);
        for (auto it = lo; it != hi && !first; ++it)
            if (members[it->second].first == key)
                first = it->second;
    }
    if (first)
        fail(start,
             "duplicate key " + quote(key) + " at " + echo(path(false) + pointerSegment(key), 40)
                     + " (first given at " + placeOf(m_text, top.keyOffsets[*first])
                     + "); a key may appear once in an object");
    if (!top.byHash.empty())
        top.byHash.emplace(hash, members.size());
    top.keyOffsets.push_back(start);
    // The key is known to be new: append without ordered_map's linear lookup.
    members.emplace_back(std::move(key), Json());
    m_member = &members.back().second;
    return true;
}

bool DomBuilder::parse_error(std::size_t position,
                             const std::string &lastToken,
                             const nlohmann::detail::exception &e)
{
    if (e.id == 406) // out_of_range: a number too large for a double
        fail(position >= lastToken.size() ? position - lastToken.size() : 0,
             "the number " + echo(lastToken, 30)
                     + " is too large (expected a number from -1.7e308 to 1.7e308)");
    if (m_text.find_first_not_of(" \t\r\n") == std::string::npos)
        fail(0, "the file is empty (expected a JSON object)");
    // "[json.exception.parse_error.101] parse error at line 3, column 5: syntax error while
    // parsing object - unexpected '}'; expected string literal": keep what follows the prefix,
    // and show the text it last read escaped and shortened.
    std::string what = e.what();
    if (const auto p = what.find("syntax error"); p != std::string::npos)
        what = what.substr(p);
    else if (const auto q = what.find("] "); q != std::string::npos)
        what = what.substr(q + 2);
    if (const auto p = what.find("; last read: '"); p != std::string::npos)
        what = what.substr(0, p) + "; last read: '" + echo(lastToken, 30) + "'";
    else
        what = echo(what, 200);
    // The position is just past the character that was not expected.
    const std::size_t at = position > 0 ? position - 1 : 0;
    for (const std::size_t from : {at > 0 ? at - 1 : at, at})
        for (const char *word : {"-Infinity", "+Infinity", "Infinity", "-NaN", "NaN"})
            if (m_text.compare(from, std::strlen(word), word) == 0)
                fail(from,
                     "invalid JSON: " + std::string(word) + " is not a JSON number (" + what + ")");
    fail(at, "invalid JSON: " + what);
}

} // namespace

Json parseJsonText(const std::string &text, const std::string &file)
{
    if (text.size() > kMaxJsonBytes)
        throw InputError(file,
                         "",
                         "the file is " + formatNumber(text.size() / 1048576.0, 3)
                                 + " MiB; Railyard reads JSON files of at most "
                                 + std::to_string(kMaxJsonBytes >> 20) + " MiB");
    // nlohmann would stop at a NUL as if the text ended there (and accept what follows).
    if (const auto nul = text.find('\0'); nul != std::string::npos)
        throw InputError(file,
                         placeOf(text, nul),
                         "a NUL byte: expected JSON text (UTF-8), this looks like a binary file");
    std::size_t consumed = 0;
    DomBuilder builder(text, file, consumed);
    const char *begin = text.data();
    try {
        if (!Json::sax_parse(CountingIterator(begin, &consumed),
                             CountingIterator(begin + text.size(), &consumed),
                             &builder))
            throw InputError(file, "", "invalid JSON");
    } catch (const Json::exception &e) {
        // DomBuilder reports every parse error itself; this is a safety net.
        throw InputError(file, placeOf(text, consumed), "invalid JSON: " + echo(e.what(), 200));
    }
    return builder.take();
}

} // namespace railyard::engine
