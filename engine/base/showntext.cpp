#include "base/showntext.h"

namespace railyard::engine {

namespace {

bool isContinuation(unsigned char c)
{
    return (c & 0xC0) == 0x80;
}

} // namespace

std::string shownText(std::string_view text, std::size_t maxChars)
{
    if (maxChars == 0)
        return {};
    // Walk at most maxChars characters; stop where the kept part ends.
    std::size_t i = 0, chars = 0, keep = 0;
    while (i < text.size()) {
        if (chars == maxChars - 1)
            keep = i; // where "…" would go
        if (chars == maxChars)
            break;
        ++i;
        while (i < text.size() && isContinuation(static_cast<unsigned char>(text[i])))
            ++i;
        ++chars;
    }
    if (i >= text.size())
        return std::string(text); // maxChars characters or fewer: all of it
    return std::string(text.substr(0, keep)) + "\u2026";
}

} // namespace railyard::engine
