#pragma once

#include "base/safetext.h"

#include <stdexcept>
#include <string>
#include <string_view>

namespace railyard::engine {

// How much of a long value an error message echoes from each end: a 10 MB file name or string
// from a hostile file must not flood a terminal.
inline constexpr std::size_t kEchoKeep = 60;

// `text` as it can be shown in a message: control characters (C1 and bidirectional overrides
// included) and bytes that are not UTF-8 are written as \xNN (terminalText()), and a text longer
// than 2 x `keep` characters keeps its first and last `keep` (cut on character boundaries)
// around "...".
inline std::string echo(std::string_view text, std::size_t keep = kEchoKeep)
{
    const auto continuation = [&](std::size_t i) {
        return i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80;
    };
    if (text.size() > 2 * keep + 3) {
        std::size_t head = keep, tail = text.size() - keep;
        while (head > 0 && continuation(head))
            --head;
        while (tail < text.size() && continuation(tail))
            ++tail;
        return terminalText(text.substr(0, head)) + "..." + terminalText(text.substr(tail));
    }
    return terminalText(text);
}

// "\"text\"" for a message, with echo()'s escaping and eliding.
inline std::string quote(std::string_view text)
{
    return "\"" + echo(text) + "\"";
}

// A problem with something the user gave us (a file, a flag, a configuration). The message names
// the file, the place in it and what was expected, so it can be shown as is.
class InputError : public std::runtime_error
{
public:
    InputError(std::string file, std::string where, const std::string &message)
        : std::runtime_error(compose(file, where, message))
        , m_file(std::move(file))
        , m_where(std::move(where))
        , m_message(message)
    {}
    explicit InputError(const std::string &message)
        : std::runtime_error(message)
        , m_message(message)
    {}

    const std::string &file() const { return m_file; }
    // A JSON path such as "/cluster/nodes", or "line 12, column 5".
    const std::string &where() const { return m_where; }
    const std::string &message() const { return m_message; }

private:
    static std::string compose(const std::string &file,
                               const std::string &where,
                               const std::string &message)
    {
        std::string s = file.empty() ? std::string("<input>") : echo(file);
        if (!where.empty())
            s += ": " + echo(where);
        return s + ": " + message;
    }

    std::string m_file;
    std::string m_where;
    std::string m_message;
};

} // namespace railyard::engine
