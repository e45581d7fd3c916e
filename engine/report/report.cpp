#include "report/report.h"

#include "base/jsoncursor.h"
#include "base/safetext.h"
#include "base/showntext.h"
#include "base/units.h"
#include "report/reportformat.h"
#include "step/timeline.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <ostream>
#include <type_traits>

namespace railyard::engine {

using namespace reportformat;

namespace {

// One link as a one-line JSON object.
void appendLinkJson(std::string &s,
                    const Topology &t,
                    const LinkLoads &loads,
                    const std::vector<float> &moment,
                    TierNames &tiers,
                    int id)
{
    const std::size_t i = static_cast<std::size_t>(id);
    const float up = loads.bytesUp[i], down = loads.bytesDown[i];
    appendLinkHead(s, t, tiers, id);
    s += ", \"bytes_per_step\": ";
    appendNumber(s, double(up) + double(down));
    s += ", \"bytes_up\": ";
    appendNumber(s, double(up));
    s += ", \"bytes_down\": ";
    appendNumber(s, double(down));
    s += ", \"utilization\": ";
    appendNumber(s, double(loads.utilization[i]));
    s += ", \"peak_utilization\": ";
    appendNumber(s, double(loads.peakUtilization[i]));
    if (!moment.empty()) {
        s += ", \"utilization_at\": ";
        appendNumber(s, double(moment[i]));
    }
    s += '}';
}

// The at most `count` indices below `n` that `carries`, ordered by `busier` (a strict order:
// busiest first, ties by index): one pass with a heap of the best so far (its top the least
// busy of them), no copy of a million ids.
template<class Id, class Carries, class Busier>
std::vector<Id> busiestOf(std::size_t n, std::size_t count, Carries carries, Busier busier)
{
    std::vector<Id> best;
    best.reserve(count + 1);
    for (std::size_t i = 0; i < n && count > 0; ++i) {
        if (!carries(i))
            continue;
        const Id id = static_cast<Id>(i);
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

// A pattern's links that carry bytes, busiest first (ties by id), at most `count` of them.
std::vector<std::size_t> busiestShares(const TrafficPattern &pattern, std::size_t count)
{
    const auto &links = pattern.links;
    const auto busier = [&](std::size_t a, std::size_t b) {
        const float ba = links[a].up + links[a].down, bb = links[b].up + links[b].down;
        return ba != bb ? ba > bb : a < b;
    };
    return busiestOf<std::size_t>(
            links.size(),
            count,
            [&](std::size_t i) { return links[i].up + links[i].down > 0; },
            busier);
}

} // namespace

void reportformat::appendLinkHead(std::string &s, const Topology &t, TierNames &tiers, int id)
{
    s += "{\"id\": ";
    appendNumber(s, id);
    s += ", \"name\": ";
    appendJsonString(s, t.linkName(id));
    s += ", \"kind\": \"";
    s += toString(t.links()[static_cast<std::size_t>(id)].kind);
    s += "\", \"tier\": \"";
    s += tiers(linkTier(t, id));
    s += '"';
}

// `"timeline": [...]`, phase by phase, each phase's links on its own lines. With
// LinkListing::All every link the phase puts bytes on; otherwise its `busiest` links by bytes
// (none with LinkListing::None), and `links_omitted` / `bytes_omitted` say what was left out: a
// 262,144-GPU step's phases cross hundreds of millions of links in all.
void reportformat::appendTimelineJson(std::string &s,
                                      Buffered &b,
                                      const StepTimeline &tl,
                                      const ReportOptions &o,
                                      const char *key)
{
    // Phases share patterns (every micro-batch's TP all-reduce is one): rank each pattern once.
    struct Ranked
    {
        std::vector<std::size_t> listed; // indices into the pattern's links
        std::size_t carrying = 0;        // links with bytes
        double bytes = 0;                // their bytes, before the phase's share
        double listedBytes = 0;
        bool done = false;
    };
    std::vector<Ranked> ranked(tl.patterns.size());
    const bool all = o.links == LinkListing::All;
    const std::size_t count = o.links == LinkListing::None ? 0 : o.busiest;
    const auto rank = [&](int pattern) -> const Ranked & {
        Ranked &r = ranked[static_cast<std::size_t>(pattern)];
        if (r.done)
            return r;
        r.done = true;
        const TrafficPattern &tp = tl.patterns[static_cast<std::size_t>(pattern)];
        for (const LinkShare &l : tp.links)
            if (l.up + l.down > 0) {
                ++r.carrying;
                r.bytes += double(l.up) + double(l.down);
            }
        if (!all) {
            r.listed = busiestShares(tp, count);
            for (std::size_t i : r.listed)
                r.listedBytes += double(tp.links[i].up) + double(tp.links[i].down);
        }
        return r;
    };

    s += ",\n  \"";
    s += key;
    s += "\": [";
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
        if (p.segments > 0) {
            // Where its collective shared links and ran slower: the share of its bytes in each.
            s += ", \"segments\": [";
            for (int i = 0; i < p.segments; ++i) {
                const PhaseSegment &g = tl.segments[static_cast<std::size_t>(p.firstSegment + i)];
                s += i == 0 ? "{\"start_s\": " : ", {\"start_s\": ";
                appendNumber(s, g.start);
                s += ", \"end_s\": ";
                appendNumber(s, g.end);
                s += ", \"fraction\": ";
                appendNumber(s, g.fraction);
                s += '}';
            }
            s += ']';
        }
        s += ", \"links\": [";
        std::size_t omitted = 0;
        double omittedBytes = 0;
        if (p.pattern >= 0) {
            const TrafficPattern &tp = tl.patterns[static_cast<std::size_t>(p.pattern)];
            const float share = static_cast<float>(p.share);
            bool firstLink = true;
            const auto link = [&](const LinkShare &l) {
                s += firstLink ? "{\"id\": " : ", {\"id\": ";
                firstLink = false;
                appendNumber(s, l.link);
                s += ", \"bytes\": ";
                appendNumber(s, double(l.up * share) + double(l.down * share));
                s += '}';
                b.maybeFlush();
            };
            if (all) {
                for (const LinkShare &l : tp.links)
                    link(l);
            } else {
                const Ranked &r = rank(p.pattern);
                for (std::size_t i : r.listed)
                    link(tp.links[i]);
                omitted = r.carrying - r.listed.size();
                omittedBytes = (r.bytes - r.listedBytes) * p.share;
            }
        }
        s += "]";
        if (!all) {
            s += ", \"links_omitted\": ";
            appendNumber(s, omitted);
            s += ", \"bytes_omitted\": ";
            appendNumber(s, std::max(0.0, omittedBytes));
        }
        s += "}";
        b.maybeFlush();
    }
    s += first ? "]" : "\n  ]";
}

namespace {

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

} // namespace

std::string jsonDocument(const Json &j)
{
    return jsonForTerminal(j.dump(2, ' ', false, Json::error_handler_t::replace)) + "\n";
}

std::vector<float> linkLoadsAt(const Evaluation &e, const Topology &t, double at)
{
    std::vector<float> out;
    if (at >= 0 && !e.timeline.empty())
        utilizationAt(e.timeline, t, at, out);
    return out;
}

std::string LinkTier::name() const
{
    return std::string(toString(from)) + "-" + toString(to);
}

namespace {
LinkTier tierOfEnds(int ends)
{
    return {static_cast<DeviceKind>(ends / kLinkKinds / kDeviceKinds),
            static_cast<DeviceKind>(ends / kLinkKinds % kDeviceKinds),
            static_cast<LinkKind>(ends % kLinkKinds)};
}
} // namespace

LinkTier linkTier(const Topology &t, int link)
{
    return tierOfEnds(t.linkEnds(link));
}

std::vector<LinkTierSummary> summarizeLinks(const Topology &t, const LinkLoads &loads)
{
    std::array<LinkTierSummary, kDeviceKinds * kDeviceKinds * kLinkKinds> byKey{};
    const std::size_t n = std::min<std::size_t>(loads.size(), t.links().size());
    for (std::size_t i = 0; i < n; ++i) {
        const int ends = t.linkEnds(static_cast<int>(i));
        LinkTierSummary &s = byKey[static_cast<std::size_t>(ends)];
        if (s.links++ == 0)
            s.tier = tierOfEnds(ends);
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
    return busiestOf<int>(
            loads.size(),
            count,
            [&](std::size_t i) { return loads.bytesUp[i] != 0 || loads.bytesDown[i] != 0; },
            busier);
}

std::vector<int> busiestByUtilization(const std::vector<float> &utilization, std::size_t count)
{
    const auto busier = [&](int a, int b) {
        const float ua = utilization[static_cast<std::size_t>(a)];
        const float ub = utilization[static_cast<std::size_t>(b)];
        return ua != ub ? ua > ub : a < b;
    };
    return busiestOf<int>(
            utilization.size(), count, [&](std::size_t i) { return utilization[i] > 0; }, busier);
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
    j["step_time_band_basis"] = e.stepTimeBand.basis;
    j["tokens_per_step"] = e.tokensPerStep;
    j["tokens_per_s"] = e.tokensPerS;
    j["tokens_per_s_per_gpu"] = e.tokensPerSPerGpu;
    j["mfu"] = e.mfu;
    if (e.mfuOfFp8Peak > 0)
        j["mfu_of_fp8_peak"] = e.mfuOfFp8Peak;
    j["model_tflops_per_gpu"] = e.modelTflopsPerGpu;
    j["flop_convention"] = e.flopConvention;
    j["memory_gib_per_gpu"] = e.memory.totalGiB();
    j["hbm_gib"] = e.hbmGiB;
    j["memory_breakdown_gib"] = memoryBreakdownJson(e.memory);
    j["memory_gib_per_stage"] = e.memoryGiBPerStage;
    j["breakdown_s"] = breakdownJson(e.exposed);
    j["total_s"] = breakdownJson(e.total);
    if (e.costPerStep > 0) {
        j["cost_per_step"] = e.costPerStep;
        j["cost_per_million_tokens"] = e.costPerMillionTokens;
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
    for (const auto &[key, value] : o.extra.get().items())
        j[key] = value;
    const bool links = o.links != LinkListing::None && e.links;
    j["link_tiers"] = links ? tiersJson(summarizeLinks(t, *e.links)) : Json::array();
    const std::vector<float> moment = links ? linkLoadsAt(e, t, o.at) : std::vector<float>{};
    if (!moment.empty())
        j["at_s"] = o.at;

    // Everything but the links as one object, left open; the links follow row by row.
    std::string head = jsonForTerminal(j.dump(2, ' ', false, Json::error_handler_t::replace));
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
        appendLinkJson(s, t, *e.links, moment, tierNames, id);
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
        appendTimelineJson(s, b, e.timeline, o, "timeline");
    s += "\n}\n";
}

void writeEvaluationText(std::ostream &out,
                         const Evaluation &e,
                         const Topology &t,
                         const ReportOptions &o)
{
    Buffered b(out);
    std::string &s = b.text();
    // Names come from the layout: control characters are escaped, never sent to the terminal.
    s += terminalText(shownTitle(o.title)) + "\n";
    s += "  step time         " + formatSeconds(e.stepTimeS) + " \u00b1"
         + formatNumber(100 * e.stepTimeBand.fraction, 2) + "%  ("
         + terminalText(e.stepTimeBand.basis) + ")\n";
    s += "  tokens/s per GPU  " + formatNumber(e.tokensPerSPerGpu, 4) + "  ("
         + formatNumber(e.tokensPerS, 4) + " in all)\n";
    s += "  MFU               " + formatNumber(100 * e.mfu, 3) + "%  ("
         + formatNumber(e.modelTflopsPerGpu, 4) + " model TFLOP/s per GPU" + mfuFp8Note(e) + ")\n";
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
            s += "    " + padded(percent(loads.utilization[i]), 8, true) + "  "
                 + terminalText(t.linkName(id)) + " (" + toString(t.links()[i].kind) + ", "
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
        s += std::string("  ") + severityName(w.severity) + ": " + terminalText(w.message) + "\n";
}

} // namespace railyard::engine
