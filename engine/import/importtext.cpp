#include "import/importtext.h"

#include "base/boundedread.h"

#include "base/inputerror.h"
#include "base/units.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace railyard::engine {

namespace {

std::string hexByte(unsigned char c)
{
    static const char *hex = "0123456789ABCDEF";
    return std::string("\\x") + hex[c >> 4] + hex[c & 15];
}

} // namespace

std::string readImportText(const std::string &path)
{
    return readBoundedFile(path, kMaxImportBytes, "a file to import", "an imported file");
}

void checkImportText(std::string_view text, const std::string &file)
{
    if (text.size() > kMaxImportBytes)
        throw InputError(file,
                         "",
                         "the text is " + formatNumber(text.size() / 1048576.0, 3)
                                 + " MiB; an imported file is at most "
                                 + std::to_string(kMaxImportBytes >> 20) + " MiB");
    bool blank = true;
    for (char c : text)
        if (!std::strchr(" \t\r\n", c)) {
            blank = false;
            break;
        }
    if (blank)
        throw InputError(file,
                         "",
                         "the file is empty; expected nvidia-smi topo -m output, NCCL "
                         "topology or graph XML, or an nccl-tests log");
    const auto starts = [&](std::string_view bom) { return text.substr(0, bom.size()) == bom; };
    if (starts("\xFF\xFE") || starts("\xFE\xFF") || starts(std::string_view("\0\0\xFE\xFF", 4)))
        throw InputError(file, "line 1", "the file is UTF-16 or UTF-32 text; save it as UTF-8");
    // NUL bytes first: a binary file is named as such, not by its first non-UTF-8 byte.
    if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
        const auto lines = std::count(text.begin(), text.begin() + static_cast<long>(nul), '\n');
        throw InputError(file,
                         lineRef(static_cast<std::size_t>(lines) + 1),
                         "a NUL byte: this is a binary file, not a text export");
    }
    std::size_t line = 1;
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == '\n') {
            ++line;
            ++i;
            continue;
        }
        if (c == 0)
            throw InputError(file,
                             lineRef(line),
                             "a NUL byte: this is a binary file, not a text export");
        if (c < 0x80) {
            ++i;
            continue;
        }
        std::size_t n = 0;
        if (c >= 0xC2 && c <= 0xDF)
            n = 2;
        else if (c >= 0xE0 && c <= 0xEF)
            n = 3;
        else if (c >= 0xF0 && c <= 0xF4)
            n = 4;
        bool ok = n > 0 && i + n <= text.size();
        for (std::size_t k = 1; ok && k < n; ++k)
            ok = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
        if (ok && n >= 3) {
            const auto c1 = static_cast<unsigned char>(text[i + 1]);
            ok = !(c == 0xE0 && c1 < 0xA0) && !(c == 0xED && c1 > 0x9F) && !(c == 0xF0 && c1 < 0x90)
                 && !(c == 0xF4 && c1 > 0x8F);
        }
        if (!ok)
            throw InputError(file,
                             lineRef(line),
                             "a byte that is not UTF-8 (" + hexByte(c)
                                     + "); save the file as UTF-8 text");
        i += n;
    }
}

std::vector<std::string> splitImportLines(std::string_view text, const std::string &file)
{
    if (text.substr(0, 3) == "\xEF\xBB\xBF")
        text.remove_prefix(3);
    std::vector<std::string> lines;
    std::string cur;
    const auto push = [&] {
        if (lines.size() >= kMaxImportLines)
            throw InputError(file,
                             lineRef(lines.size() + 1),
                             "more than " + std::to_string(kMaxImportLines)
                                     + " lines; this is not a topology or nccl-tests output");
        lines.push_back(std::move(cur));
        cur.clear();
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\n' || c == '\r') {
            push();
            if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n')
                ++i;
            continue;
        }
        if (c == '\x1b') {
            // CSI: ESC [ parameters final-byte (0x40-0x7E); other escapes: ESC and one byte.
            if (i + 1 < text.size() && text[i + 1] == '[') {
                i += 2;
                while (i < text.size() && !(text[i] >= 0x40 && text[i] <= 0x7E))
                    ++i;
            } else {
                ++i;
            }
            continue;
        }
        cur += c;
        if (cur.size() > kMaxImportLineBytes)
            throw InputError(file,
                             lineRef(lines.size() + 1),
                             "a line longer than " + std::to_string(kMaxImportLineBytes / 1024)
                                     + " KiB; this is not a topology or nccl-tests output");
    }
    if (!cur.empty())
        push();
    return lines;
}

std::vector<std::string_view> splitFields(std::string_view line)
{
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
            ++i;
        const std::size_t b = i;
        while (i < line.size() && line[i] != ' ' && line[i] != '\t')
            ++i;
        if (i > b)
            out.push_back(line.substr(b, i - b));
    }
    return out;
}

bool parseFiniteDouble(std::string_view text, double &out)
{
    if (text.empty() || text.size() > 64)
        return false;
    if (text.front() == '+')
        text.remove_prefix(1);
    const auto r = std::from_chars(text.data(), text.data() + text.size(), out);
    return r.ec == std::errc() && r.ptr == text.data() + text.size() && std::isfinite(out);
}

bool parseCount(std::string_view text, long long max, long long &out)
{
    if (text.empty() || text.size() > 20)
        return false;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), out);
    return r.ec == std::errc() && r.ptr == text.data() + text.size() && out >= 0 && out <= max;
}

} // namespace railyard::engine
