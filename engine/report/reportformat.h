#pragma once

// What the report writers share (report.cpp: JSON and text; reportdocuments.cpp: Markdown and
// CSV): buffered streaming, number and string formatting. Shared with the plan's writer (planner/planreport.cpp).

#include "base/jsoncursor.h"
#include "base/units.h"
#include "report/report.h"
#include "step/evaluate.h"
#include "step/memory.h"
#include "step/timeline.h"

#include <array>
#include <charconv>
#include <cmath>
#include <ostream>
#include <string>
#include <type_traits>

namespace railyard::engine::reportformat {

// The tier's number: Topology::linkEnds() of its links.
inline int tierKey(const LinkTier &t)
{
    return (static_cast<int>(t.from) * kDeviceKinds + static_cast<int>(t.to)) * kLinkKinds
           + static_cast<int>(t.kind);
}

// Text is gathered in a buffer and handed to the stream in large pieces: a million small
// writes to std::cout cost more than formatting them.
class Buffered
{
public:
    explicit Buffered(std::ostream &out)
        : m_out(out)
    {
        m_buf.reserve(kChunk + 1024);
    }
    ~Buffered() { flush(); }
    std::string &text() { return m_buf; }
    void maybeFlush()
    {
        if (m_buf.size() >= kChunk)
            flush();
    }
    void flush()
    {
        m_out.write(m_buf.data(), static_cast<std::streamsize>(m_buf.size()));
        m_buf.clear();
    }

private:
    static constexpr std::size_t kChunk = 1 << 16;
    std::ostream &m_out;
    std::string m_buf;
};

template<class T>
inline void appendNumber(std::string &s, T v)
{
    if constexpr (std::is_floating_point_v<T>) {
        if (!std::isfinite(v)) {
            s += "null"; // JSON has no NaN or infinity
            return;
        }
    }
    char b[40];
    const auto r = std::to_chars(b, b + sizeof b, v); // shortest text that reads back exactly
    s.append(b, r.ptr);
}

// A JSON string: C0 controls, DEL and C1 controls as \u escapes (the last two are allowed raw
// in JSON but would reach a terminal printing it).
inline void appendJsonString(std::string &s, const std::string &text)
{
    static const char *hex = "0123456789abcdef";
    const auto escape = [&](unsigned c) {
        s += "\\u00";
        s += hex[c >> 4];
        s += hex[c & 15];
    };
    s += '"';
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char ch = text[i];
        const unsigned char c = static_cast<unsigned char>(ch);
        const unsigned char next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1])
                                                       : 0;
        if (c == '"' || c == '\\') {
            s += '\\';
            s += ch;
        } else if (c < 0x20 || c == 0x7F) {
            escape(c);
        } else if (c == 0xC2 && next >= 0x80 && next <= 0x9F) {
            escape(next);
            ++i;
        } else {
            s += ch;
        }
    }
    s += '"';
}

// Tier names, made once per tier rather than once per link.
class TierNames
{
public:
    const std::string &operator()(const LinkTier &tier)
    {
        std::string &name = m_names[static_cast<std::size_t>(tierKey(tier))];
        if (name.empty())
            name = tier.name();
        return name;
    }

private:
    std::array<std::string, kDeviceKinds * kDeviceKinds * kLinkKinds> m_names;
};

inline const char *severityName(Severity s)
{
    return s == Severity::Error ? "error" : s == Severity::Warning ? "warning" : "info";
}

// 131072 -> "131,072".
inline std::string grouped(std::size_t n)
{
    std::string digits = std::to_string(n), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0)
            out += ',';
        out += digits[i];
    }
    return out;
}

inline std::string percent(double x)
{
    return formatNumber(100 * x, 3) + "%";
}

// Bytes in powers of 1000 with three significant digits: "4.49 TB".
inline std::string bytesText(double bytes)
{
    static const char *units[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
    std::size_t u = 0;
    while (std::abs(bytes) >= 999.5 && u + 1 < std::size(units)) {
        bytes /= 1000;
        ++u;
    }
    return formatNumber(bytes, 3) + " " + units[u];
}

inline std::string padded(std::string s, std::size_t width, bool right = false)
{
    if (s.size() < width)
        s.insert(right ? 0 : s.size(), width - s.size(), ' ');
    return s;
}

// The start of one link's one-line JSON object, `{"id": 3, "name": "...", "kind": "nvlink",
// "tier": "gpu-nvswitch"`, left open for the writer's own keys (report.cpp).
void appendLinkHead(std::string &s, const Topology &topology, TierNames &tiers, int id);

// The per-link loads as CSV rows (report.h, writeLinkLoadsCsv), for training's step or a
// serving decode step: `moment` (dense by link id, may be empty) adds utilization_at and
// `perRequest` (serving: bytes per request, dense by link id, may be null) bytes_per_request;
// a link with bytes per request counts as loaded. Streams row by row (reportdocuments.cpp).
void writeLoadsCsv(std::ostream &out,
                   const LinkLoads &loads,
                   const Topology &topology,
                   bool allLinks,
                   const std::vector<float> &moment,
                   const std::vector<float> *perRequest = nullptr);

// `"key": [...]`: a timeline's phases with the bytes each puts on its links (report.cpp), after
// a comma, appended to `s` and flushed through `b` as it grows.
void appendTimelineJson(std::string &s,
                        Buffered &b,
                        const StepTimeline &timeline,
                        const ReportOptions &options,
                        const char *key);

// The objects every report that prices a step writes alike (evaluate, plan, buy): one
// vocabulary of keys (README, "JSON output").

// `breakdown_s` (exposed seconds) and `total_s`: seconds per part of the step.
inline Json breakdownJson(const StepBreakdown &b)
{
    return Json{{"compute", b.compute},
                {"tp", b.tp},
                {"cp", b.cp},
                {"ep", b.ep},
                {"pp_bubble", b.ppBubble},
                {"pp_p2p", b.ppP2p},
                {"dp", b.dp},
                {"optimizer", b.optimizer}};
}

// `memory_breakdown_gib`: GiB per GPU on the most loaded stage, by what holds them.
inline Json memoryBreakdownJson(const MemoryBreakdown &m)
{
    return Json{{"weights", m.weightsGiB},
                {"gradients", m.gradientsGiB},
                {"optimizer", m.optimizerGiB},
                {"activations", m.activationsGiB},
                {"other", m.otherGiB}};
}

// After an MFU against the BF16 peak, an FP8 run's share of its own peak: "; 44.1% of the FP8
// peak" (empty for other runs).
inline std::string mfuFp8Note(const Evaluation &e)
{
    return e.mfuOfFp8Peak > 0 ? "; " + formatNumber(100 * e.mfuOfFp8Peak, 3) + "% of the FP8 peak"
                              : std::string();
}

} // namespace railyard::engine::reportformat
