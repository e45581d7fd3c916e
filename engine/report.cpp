#include "report.h"

#include "jsoncursor.h"
#include "units.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <ostream>
#include <type_traits>

namespace railyard::engine {

namespace {

constexpr int kDeviceKinds = 8; // DeviceKind's values
constexpr int kLinkKinds = 5;   // LinkKind's values

int tierKey(const LinkTier &t)
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
void appendNumber(std::string &s, T v)
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

void appendJsonString(std::string &s, const std::string &text)
{
    s += '"';
    for (const char ch : text) {
        const unsigned char c = static_cast<unsigned char>(ch);
        if (c == '"' || c == '\\') {
            s += '\\';
            s += ch;
        } else if (c < 0x20) {
            static const char *hex = "0123456789abcdef";
            s += "\\u00";
            s += hex[c >> 4];
            s += hex[c & 15];
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

// One link as a one-line JSON object.
void appendLinkJson(
        std::string &s, const Topology &t, const LinkLoads &loads, TierNames &tiers, int id)
{
    const std::size_t i = static_cast<std::size_t>(id);
    const float up = loads.bytesUp[i], down = loads.bytesDown[i];
    s += "{\"id\": ";
    appendNumber(s, id);
    s += ", \"name\": ";
    appendJsonString(s, t.linkName(id));
    s += ", \"kind\": \"";
    s += toString(t.links()[i].kind);
    s += "\", \"tier\": \"";
    s += tiers(linkTier(t, id));
    s += "\", \"bytes_per_step\": ";
    appendNumber(s, double(up) + double(down));
    s += ", \"bytes_up\": ";
    appendNumber(s, double(up));
    s += ", \"bytes_down\": ";
    appendNumber(s, double(down));
    s += ", \"utilization\": ";
    appendNumber(s, double(loads.utilization[i]));
    s += ", \"peak_utilization\": ";
    appendNumber(s, double(loads.peakUtilization[i]));
    s += '}';
}

// `"timeline": [...]`, phase by phase, each phase's links on its own lines.
void appendTimelineJson(std::string &s, Buffered &b, const StepTimeline &tl)
{
    s += ",\n  \"timeline\": [";
    bool first = true;
    for (const Phase &p : tl.phases) {
        s += first ? "\n    " : ",\n    ";
        first = false;
        s += "{\"stage\": ";
        appendNumber(s, p.stage);
        s += ", \"kind\": \"";
        s += toString(p.kind);
        s += "\", \"name\": ";
        appendJsonString(s, p.name);
        s += ", \"exposed\": ";
        s += p.exposed ? "true" : "false";
        s += ", \"start_s\": ";
        appendNumber(s, p.start);
        s += ", \"end_s\": ";
        appendNumber(s, p.end);
        s += ", \"links\": [";
        if (p.pattern >= 0) {
            bool firstLink = true;
            const float share = static_cast<float>(p.share);
            for (const LinkShare &l : tl.patterns[static_cast<std::size_t>(p.pattern)].links) {
                s += firstLink ? "{\"id\": " : ", {\"id\": ";
                firstLink = false;
                appendNumber(s, l.link);
                s += ", \"bytes\": ";
                appendNumber(s, double(l.up * share) + double(l.down * share));
                s += '}';
                b.maybeFlush();
            }
        }
        s += "]}";
        b.maybeFlush();
    }
    s += first ? "]" : "\n  ]";
}

const char *severityName(Severity s)
{
    return s == Severity::Error ? "error" : s == Severity::Warning ? "warning" : "info";
}

Json tiersJson(const std::vector<LinkTierSummary> &tiers)
{
    Json out = Json::array();
    for (const LinkTierSummary &s : tiers)
        out.push_back({{"tier", s.tier.name()},
                       {"kind", toString(s.tier.kind)},
                       {"links", s.links},
                       {"loaded", s.loaded},
                       {"bytes_per_step", s.bytesPerStep},
                       {"mean_utilization", s.meanUtilization},
                       {"max_utilization", s.maxUtilization}});
    return out;
}

// 131072 -> "131,072".
std::string grouped(std::size_t n)
{
    std::string digits = std::to_string(n), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0)
            out += ',';
        out += digits[i];
    }
    return out;
}

std::string percent(double x)
{
    return formatNumber(100 * x, 3) + "%";
}

// Bytes in powers of 1000 with three significant digits: "4.49 TB".
std::string bytesText(double bytes)
{
    static const char *units[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
    std::size_t u = 0;
    while (std::abs(bytes) >= 999.5 && u + 1 < std::size(units)) {
        bytes /= 1000;
        ++u;
    }
    return formatNumber(bytes, 3) + " " + units[u];
}

std::string padded(std::string s, std::size_t width, bool right = false)
{
    if (s.size() < width)
        s.insert(right ? 0 : s.size(), width - s.size(), ' ');
    return s;
}

} // namespace

std::string LinkTier::name() const
{
    return std::string(toString(from)) + "-" + toString(to);
}

LinkTier linkTier(const Topology &t, int link)
{
    const Link &l = t.links()[static_cast<std::size_t>(link)];
    return {t.devices()[static_cast<std::size_t>(l.a)].kind,
            t.devices()[static_cast<std::size_t>(l.b)].kind,
            l.kind};
}

std::vector<LinkTierSummary> summarizeLinks(const Topology &t, const LinkLoads &loads)
{
    std::array<LinkTierSummary, kDeviceKinds * kDeviceKinds * kLinkKinds> byKey{};
    const std::size_t n = std::min<std::size_t>(loads.size(), t.links().size());
    for (std::size_t i = 0; i < n; ++i) {
        const LinkTier tier = linkTier(t, static_cast<int>(i));
        LinkTierSummary &s = byKey[static_cast<std::size_t>(tierKey(tier))];
        s.tier = tier;
        ++s.links;
        const double bytes = double(loads.bytesUp[i]) + double(loads.bytesDown[i]);
        if (bytes > 0)
            ++s.loaded;
        s.bytesPerStep += bytes;
        s.meanUtilization += loads.utilization[i]; // a sum until the end
        s.maxUtilization = std::max(s.maxUtilization, double(loads.utilization[i]));
    }
    std::vector<LinkTierSummary> out;
    for (LinkTierSummary &s : byKey) {
        if (s.links == 0)
            continue;
        s.meanUtilization /= double(s.links);
        out.push_back(s);
    }
    return out;
}

std::vector<int> busiestLinks(const LinkLoads &loads, std::size_t count)
{
    const auto busier = [&](int a, int b) {
        const float ua = loads.utilization[static_cast<std::size_t>(a)];
        const float ub = loads.utilization[static_cast<std::size_t>(b)];
        return ua != ub ? ua > ub : a < b;
    };
    // A heap of the best `count` so far (its top the least busy of them): one pass, no copy of
    // a million ids.
    std::vector<int> best;
    best.reserve(count + 1);
    for (std::size_t i = 0; i < loads.size() && count > 0; ++i) {
        if (loads.bytesUp[i] == 0 && loads.bytesDown[i] == 0)
            continue;
        const int id = static_cast<int>(i);
        if (best.size() == count && !busier(id, best.front()))
            continue;
        best.push_back(id);
        std::push_heap(best.begin(), best.end(), busier);
        if (best.size() > count) {
            std::pop_heap(best.begin(), best.end(), busier);
            best.pop_back();
        }
    }
    std::sort(best.begin(), best.end(), busier);
    return best;
}

void writeEvaluationJson(std::ostream &out,
                         const Evaluation &e,
                         const Topology &t,
                         const ReportOptions &o)
{
    Json j;
    j["step_time_s"] = e.stepTimeS;
    // The uncertainty from validation: the step time's band for runs like this one.
    j["step_time_band_s"] = {e.stepTimeBand.lowS, e.stepTimeBand.highS};
    j["tokens_per_step"] = e.tokensPerStep;
    j["tokens_per_s"] = e.tokensPerS;
    j["tokens_per_s_per_gpu"] = e.tokensPerSPerGpu;
    j["mfu"] = e.mfu;
    j["model_tflops_per_gpu"] = e.modelTflopsPerGpu;
    j["flop_convention"] = e.flopConvention;
    j["memory_gib_per_gpu"] = e.memory.totalGiB();
    j["hbm_gib"] = e.hbmGiB;
    j["memory_gib"] = {{"weights", e.memory.weightsGiB},
                       {"gradients", e.memory.gradientsGiB},
                       {"optimizer", e.memory.optimizerGiB},
                       {"activations", e.memory.activationsGiB},
                       {"other", e.memory.otherGiB}};
    j["memory_gib_per_stage"] = e.memoryGiBPerStage;
    const auto breakdown = [](const StepBreakdown &b) {
        return Json{{"compute", b.compute},
                    {"tp", b.tp},
                    {"cp", b.cp},
                    {"ep", b.ep},
                    {"pp_bubble", b.ppBubble},
                    {"pp_p2p", b.ppP2p},
                    {"dp", b.dp},
                    {"optimizer", b.optimizer}};
    };
    j["breakdown_s"] = breakdown(e.exposed);
    j["total_s"] = breakdown(e.total);
    if (e.costPerStep > 0) {
        j["cost_per_step_usd"] = e.costPerStep;
        j["cost_per_million_tokens_usd"] = e.costPerMillionTokens;
    }
    Json warnings = Json::array();
    for (const Warning &w : e.warnings)
        warnings.push_back({{"severity", severityName(w.severity)},
                            {"code", w.code},
                            {"message", w.message},
                            {"gpus", w.gpus.size()},
                            {"cost_s", w.costS}});
    j["warnings"] = warnings;
    j["assumptions"] = e.assumptions;
    const bool links = o.links != LinkListing::None && e.links;
    j["link_tiers"] = links ? tiersJson(summarizeLinks(t, *e.links)) : Json::array();

    // Everything but the links as one object, left open; the links follow row by row.
    std::string head = j.dump(2);
    head.resize(head.size() - 2); // "\n}"
    Buffered b(out);
    std::string &s = b.text();
    s += head;
    s += ",\n  \"links\": [";
    bool first = true;
    TierNames tierNames;
    const auto row = [&](int id) {
        s += first ? "\n    " : ",\n    ";
        first = false;
        appendLinkJson(s, t, *e.links, tierNames, id);
        b.maybeFlush();
    };
    if (links && o.links == LinkListing::All) {
        for (std::size_t i = 0; i < e.links->size(); ++i)
            row(static_cast<int>(i));
    } else if (links) {
        for (int id : busiestLinks(*e.links, o.busiest))
            row(id);
    }
    s += first ? "]" : "\n  ]";
    if (o.timeline)
        appendTimelineJson(s, b, e.timeline);
    s += "\n}\n";
}

void writeEvaluationText(std::ostream &out,
                         const Evaluation &e,
                         const Topology &t,
                         const ReportOptions &o)
{
    Buffered b(out);
    std::string &s = b.text();
    s += o.title + "\n";
    s += "  step time         " + formatSeconds(e.stepTimeS) + " \u00b1"
         + formatNumber(100 * e.stepTimeBand.fraction, 2) + "%  (" + e.stepTimeBand.basis + ")\n";
    s += "  tokens/s per GPU  " + formatNumber(e.tokensPerSPerGpu, 4) + "  ("
         + formatNumber(e.tokensPerS, 4) + " in all)\n";
    s += "  MFU               " + formatNumber(100 * e.mfu, 3) + "%  ("
         + formatNumber(e.modelTflopsPerGpu, 4) + " model TFLOP/s per GPU)\n";
    s += "  memory per GPU    " + formatNumber(e.memory.totalGiB(), 3) + " GiB of "
         + formatNumber(e.hbmGiB, 3) + "\n";
    if (e.costPerStep > 0)
        s += "  cost              $" + formatNumber(e.costPerMillionTokens, 3)
             + " per million tokens\n";
    const StepBreakdown &x = e.exposed;
    s += "  exposed seconds   compute " + formatNumber(x.compute, 4) + ", TP "
         + formatNumber(x.tp, 3) + ", CP " + formatNumber(x.cp, 3) + ", EP " + formatNumber(x.ep, 3)
         + ", PP bubble " + formatNumber(x.ppBubble, 3) + ", PP p2p " + formatNumber(x.ppP2p, 3)
         + ", DP " + formatNumber(x.dp, 3) + ", optimizer " + formatNumber(x.optimizer, 3) + "\n";
    if (o.links != LinkListing::None && e.links) {
        const LinkLoads &loads = *e.links;
        s += "  links             " + grouped(loads.size()) + " links, " + grouped(loads.loaded)
             + " with traffic; utilization = busiest direction / (rate x step time)\n";
        s += "    " + padded("tier", 22) + padded("kind", 10) + padded("links", 11, true)
             + padded("loaded", 11, true) + padded("bytes/step", 12, true) + padded("mean", 9, true)
             + padded("max", 9, true) + "\n";
        for (const LinkTierSummary &tier : summarizeLinks(t, loads))
            s += "    " + padded(tier.tier.name(), 22) + padded(toString(tier.tier.kind), 10)
                 + padded(grouped(tier.links), 11, true) + padded(grouped(tier.loaded), 11, true)
                 + padded(bytesText(tier.bytesPerStep), 12, true)
                 + padded(percent(tier.meanUtilization), 9, true)
                 + padded(percent(tier.maxUtilization), 9, true) + "\n";
        const auto line = [&](int id) {
            const std::size_t i = static_cast<std::size_t>(id);
            s += "    " + padded(percent(loads.utilization[i]), 8, true) + "  " + t.linkName(id)
                 + " (" + toString(t.links()[i].kind) + ", "
                 + bytesText(double(loads.bytesUp[i]) + double(loads.bytesDown[i]))
                 + " per step)\n";
            b.maybeFlush();
        };
        if (o.links == LinkListing::All) {
            s += "  every link\n";
            for (std::size_t i = 0; i < loads.size(); ++i)
                line(static_cast<int>(i));
        } else {
            const std::vector<int> busiest = busiestLinks(loads, o.busiest);
            if (!busiest.empty())
                s += "  busiest links     " + std::to_string(busiest.size()) + " of "
                     + grouped(loads.loaded) + " with traffic\n";
            for (int id : busiest)
                line(id);
        }
    }
    for (const Warning &w : e.warnings)
        s += std::string("  ") + severityName(w.severity) + ": " + w.message + "\n";
}

namespace {

// A Markdown table cell: '|' escaped, line breaks folded, so a name never breaks the table.
std::string cell(const std::string &text)
{
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        if (c == '|')
            out += "\\|";
        else if (c == '\n' || c == '\r')
            out += ' ';
        else
            out += c;
    }
    return out;
}

// A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break.
void appendCsvField(std::string &s, const std::string &text)
{
    if (text.find_first_of(",\"\r\n") == std::string::npos) {
        s += text;
        return;
    }
    s += '"';
    for (const char c : text) {
        if (c == '"')
            s += '"';
        s += c;
    }
    s += '"';
}

} // namespace

void writeEvaluationMarkdown(std::ostream &out,
                             const Evaluation &e,
                             const Topology &t,
                             const ReportOptions &o)
{
    Buffered b(out);
    std::string &s = b.text();
    s += "# " + cell(o.title) + "\n\n";
    s += "| Quantity | Value |\n|---|---|\n";
    s += "| Step time | " + formatSeconds(e.stepTimeS) + " \u00b1"
         + formatNumber(100 * e.stepTimeBand.fraction, 2) + "% ("
         + formatSeconds(e.stepTimeBand.lowS) + " to " + formatSeconds(e.stepTimeBand.highS)
         + ") |\n";
    s += "| Tokens per step | " + formatNumber(e.tokensPerStep, 4) + " |\n";
    s += "| Tokens/s | " + formatNumber(e.tokensPerS, 4) + " ("
         + formatNumber(e.tokensPerSPerGpu, 4) + " per GPU) |\n";
    s += "| MFU | " + formatNumber(100 * e.mfu, 3) + "% (" + formatNumber(e.modelTflopsPerGpu, 4)
         + " model TFLOP/s per GPU) |\n";
    s += "| Memory per GPU | " + formatNumber(e.memory.totalGiB(), 3) + " GiB of "
         + formatNumber(e.hbmGiB, 3) + " GiB |\n";
    if (e.costPerStep > 0)
        s += "| Cost | $" + formatNumber(e.costPerStep, 4) + " per step, $"
             + formatNumber(e.costPerMillionTokens, 3) + " per million tokens |\n";
    if (!e.stepTimeBand.basis.empty())
        s += "\nStep-time band: " + cell(e.stepTimeBand.basis) + "\n";

    s += "\n## Where the step goes (exposed seconds)\n\n| Part | Exposed | Total "
         "|\n|---|---:|---:|\n";
    const StepBreakdown &x = e.exposed, &tot = e.total;
    const std::pair<const char *, double StepBreakdown::*> parts[]
            = {{"Compute", &StepBreakdown::compute},
               {"TP", &StepBreakdown::tp},
               {"CP", &StepBreakdown::cp},
               {"EP", &StepBreakdown::ep},
               {"PP bubble", &StepBreakdown::ppBubble},
               {"PP p2p", &StepBreakdown::ppP2p},
               {"DP", &StepBreakdown::dp},
               {"Optimizer", &StepBreakdown::optimizer}};
    for (const auto &[name, member] : parts)
        s += std::string("| ") + name + " | " + formatSeconds(x.*member) + " | "
             + formatSeconds(tot.*member) + " |\n";

    if (o.links != LinkListing::None && e.links) {
        const LinkLoads &loads = *e.links;
        s += "\n## Links\n\n" + grouped(loads.size()) + " links, " + grouped(loads.loaded)
             + " with traffic. Utilization = busiest direction / (rate \u00d7 step time).\n\n";
        s += "| Tier | Kind | Links | Loaded | Bytes/step | Mean | Max |\n"
             "|---|---|---:|---:|---:|---:|---:|\n";
        for (const LinkTierSummary &tier : summarizeLinks(t, loads))
            s += "| " + tier.tier.name() + " | " + toString(tier.tier.kind) + " | "
                 + grouped(tier.links) + " | " + grouped(tier.loaded) + " | "
                 + bytesText(tier.bytesPerStep) + " | " + percent(tier.meanUtilization) + " | "
                 + percent(tier.maxUtilization) + " |\n";
        std::vector<int> ids;
        if (o.links == LinkListing::All) {
            s += "\n### Every link\n\n";
        } else {
            ids = busiestLinks(loads, o.busiest);
            if (!ids.empty())
                s += "\n### Busiest links (" + std::to_string(ids.size()) + " of "
                     + grouped(loads.loaded) + " with traffic)\n\n";
        }
        const auto row = [&](int id) {
            const std::size_t i = static_cast<std::size_t>(id);
            s += "| " + cell(t.linkName(id)) + " | " + toString(t.links()[i].kind) + " | "
                 + bytesText(double(loads.bytesUp[i]) + double(loads.bytesDown[i])) + " | "
                 + percent(loads.utilization[i]) + " | " + percent(loads.peakUtilization[i])
                 + " |\n";
            b.maybeFlush();
        };
        if (o.links == LinkListing::All || !ids.empty())
            s += "| Link | Kind | Bytes/step | Utilization | Peak |\n|---|---|---:|---:|---:|\n";
        if (o.links == LinkListing::All)
            for (std::size_t i = 0; i < loads.size(); ++i)
                row(static_cast<int>(i));
        for (int id : ids)
            row(id);
    }
    if (!e.warnings.empty()) {
        s += "\n## Warnings\n\n";
        for (const Warning &w : e.warnings)
            s += std::string("- **") + severityName(w.severity) + "**: " + cell(w.message) + "\n";
    }
    if (!e.assumptions.empty()) {
        s += "\n## Assumptions\n\n";
        for (const std::string &a : e.assumptions)
            s += "- " + cell(a) + "\n";
    }
}

void writeLinkLoadsCsv(std::ostream &out, const Evaluation &e, const Topology &t, bool allLinks)
{
    Buffered b(out);
    std::string &s = b.text();
    s += "id,name,kind,tier,bytes_per_step,bytes_up,bytes_down,utilization,peak_utilization\r\n";
    if (!e.links)
        return;
    const LinkLoads &loads = *e.links;
    TierNames tiers;
    for (std::size_t i = 0; i < loads.size(); ++i) {
        const float up = loads.bytesUp[i], down = loads.bytesDown[i];
        if (!allLinks && up == 0 && down == 0)
            continue;
        const int id = static_cast<int>(i);
        appendNumber(s, id);
        s += ',';
        appendCsvField(s, t.linkName(id));
        s += ',';
        s += toString(t.links()[i].kind);
        s += ',';
        s += tiers(linkTier(t, id));
        s += ',';
        appendNumber(s, double(up) + double(down));
        s += ',';
        appendNumber(s, double(up));
        s += ',';
        appendNumber(s, double(down));
        s += ',';
        appendNumber(s, double(loads.utilization[i]));
        s += ',';
        appendNumber(s, double(loads.peakUtilization[i]));
        s += "\r\n";
        b.maybeFlush();
    }
}

} // namespace railyard::engine
