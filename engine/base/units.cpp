#include "base/units.h"

#include "base/inputerror.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace railyard::engine {

namespace {

std::string_view trim(std::string_view s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

std::string lower(std::string_view s)
{
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) {
        return static_cast<char>(std::tolower(c));
    });
    return out;
}

} // namespace

std::uint64_t parseSize(std::string_view text)
{
    const std::string original(text);
    const auto bad = [&](const std::string &why) -> InputError {
        return InputError("size '" + echo(original) + "': " + why
                          + " (expected a number with an optional unit: B, KB, MB, GB, TB, "
                            "KiB, MiB, GiB, TiB, e.g. 14GB or 8GiB)");
    };
    text = trim(text);
    if (text.empty())
        throw bad("empty");

    std::size_t numberEnd = 0;
    while (numberEnd < text.size()
           && (std::isdigit(static_cast<unsigned char>(text[numberEnd])) || text[numberEnd] == '.'
               || text[numberEnd] == 'e' || text[numberEnd] == 'E'
               || ((text[numberEnd] == '+' || text[numberEnd] == '-') && numberEnd > 0
                   && (text[numberEnd - 1] == 'e' || text[numberEnd - 1] == 'E')))) {
        ++numberEnd;
    }
    const std::string_view numberText = text.substr(0, numberEnd);
    const std::string unit = lower(trim(text.substr(numberEnd)));
    if (numberText.empty())
        throw bad("no number");

    double value = 0;
    const auto [ptr, ec] = std::from_chars(numberText.data(),
                                           numberText.data() + numberText.size(),
                                           value);
    if (ec != std::errc() || ptr != numberText.data() + numberText.size())
        throw bad("'" + echo(numberText) + "' is not a number");
    if (!std::isfinite(value) || value < 0)
        throw bad("must be a positive number");

    double scale = 0;
    if (unit.empty() || unit == "b")
        scale = 1;
    else if (unit == "kb" || unit == "k")
        scale = 1e3;
    else if (unit == "mb" || unit == "m")
        scale = 1e6;
    else if (unit == "gb" || unit == "g")
        scale = 1e9;
    else if (unit == "tb" || unit == "t")
        scale = 1e12;
    else if (unit == "kib")
        scale = 1024.0;
    else if (unit == "mib")
        scale = 1024.0 * 1024.0;
    else if (unit == "gib")
        scale = 1024.0 * 1024.0 * 1024.0;
    else if (unit == "tib")
        scale = 1024.0 * 1024.0 * 1024.0 * 1024.0;
    else
        throw bad("unknown unit '" + echo(unit) + "'");

    const double bytes = value * scale;
    // 1 PB is far beyond any message a collective moves; refuse absurd sizes clearly.
    if (bytes > 1e15)
        throw bad("larger than 1 PB");
    if (bytes > 0 && bytes < 1)
        throw bad("less than one byte");
    return static_cast<std::uint64_t>(std::llround(bytes));
}

namespace {

InputError badIndexList(std::string_view text, const std::string &why)
{
    return InputError("GPU list " + quote(text) + ": " + why
                      + " (expected indices and ranges such as 0-7,16)");
}

} // namespace

std::vector<std::pair<int, int>> parseIndexRanges(std::string_view text)
{
    const auto bad = [&](const std::string &why) { return badIndexList(text, why); };
    const auto parseInt = [&](std::string_view s) {
        s = trim(s);
        int v = 0;
        const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || v < 0)
            throw bad(quote(s) + " is not a GPU index");
        return v;
    };
    std::vector<std::pair<int, int>> ranges;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const std::size_t comma = std::min(text.find(',', pos), text.size());
        const std::string_view item = trim(text.substr(pos, comma - pos));
        if (item.empty())
            throw bad("empty item");
        const std::size_t dash = item.find('-');
        if (dash == std::string_view::npos) {
            const int v = parseInt(item);
            ranges.emplace_back(v, v);
        } else {
            const int first = parseInt(item.substr(0, dash));
            const int last = parseInt(item.substr(dash + 1));
            if (last < first)
                throw bad("range " + echo(item) + " runs backwards");
            ranges.emplace_back(first, last);
        }
        pos = comma + 1;
    }
    std::vector<std::pair<int, int>> sorted = ranges;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 1; i < sorted.size(); ++i)
        if (sorted[i].first <= sorted[i - 1].second)
            throw bad("GPU " + std::to_string(sorted[i].first) + " is listed twice");
    return ranges;
}

std::vector<int> parseIndexList(std::string_view text, int limit)
{
    const std::vector<std::pair<int, int>> ranges = parseIndexRanges(text);
    std::vector<int> out;
    for (const auto &[first, last] : ranges) {
        if (last >= limit)
            throw badIndexList(text,
                               "GPU " + std::to_string(first >= limit ? first : last)
                                       + " does not exist (the cluster has " + std::to_string(limit)
                                       + " GPUs, 0-" + std::to_string(limit - 1) + ")");
        for (int i = first; i <= last; ++i)
            out.push_back(i);
    }
    return out;
}

std::string formatNumber(double value, int digits)
{
    if (!std::isfinite(value))
        return value > 0 ? "inf" : (value < 0 ? "-inf" : "nan");
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", digits, value);
    std::string s(buf);
    // %g may print 1e+03 for 1000 with 3 digits; prefer plain notation up to 1e9.
    if (s.find('e') != std::string::npos && std::fabs(value) < 1e9 && std::fabs(value) >= 1) {
        std::snprintf(buf, sizeof buf, "%.0f", value);
        s = buf;
    }
    return s;
}

std::string formatBytes(double bytes)
{
    struct Unit
    {
        double scale;
        const char *name;
    };
    static constexpr Unit decimal[] = {{1e15, "PB"},
                                       {1e12, "TB"},
                                       {1e9, "GB"},
                                       {1e6, "MB"},
                                       {1e3, "KB"}};
    static constexpr double kib = 1024.0;
    static constexpr Unit binary[] = {{kib * kib * kib * kib, "TiB"},
                                      {kib * kib * kib, "GiB"},
                                      {kib * kib, "MiB"},
                                      {kib, "KiB"}};
    // Round decimal sizes read best in decimal units (14 GB), exact binary multiples in binary
    // ones (8 GiB, 512 KiB); anything else in decimal.
    for (const Unit &u : decimal) {
        if (bytes >= u.scale) {
            if (std::fmod(bytes, u.scale / 100) == 0)
                return formatNumber(bytes / u.scale) + " " + u.name;
            break;
        }
    }
    for (const Unit &u : binary) {
        if (bytes >= u.scale && std::fmod(bytes, u.scale) == 0)
            return formatNumber(bytes / u.scale) + " " + u.name;
    }
    for (const Unit &u : decimal) {
        if (std::fabs(bytes) >= u.scale)
            return formatNumber(bytes / u.scale) + " " + u.name;
    }
    return formatNumber(bytes) + " B";
}

std::string formatSeconds(double seconds)
{
    const double a = std::fabs(seconds);
    if (a == 0)
        return "0 s";
    if (a >= 1)
        return formatNumber(seconds) + " s";
    if (a >= 1e-3)
        return formatNumber(seconds * 1e3) + " ms";
    if (a >= 1e-6)
        return formatNumber(seconds * 1e6) + " \xC2\xB5s";
    return formatNumber(seconds * 1e9) + " ns";
}

} // namespace railyard::engine
