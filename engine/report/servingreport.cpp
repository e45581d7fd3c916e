#include "report/servingreport.h"

#include "base/jsoncursor.h"
#include "base/safetext.h"
#include "base/showntext.h"
#include "base/units.h"
#include "report/reportformat.h"

#include <algorithm>
#include <cmath>
#include <ostream>

namespace railyard::engine {

using namespace reportformat;

namespace {

Json breakdownJson(const ServingBreakdown &b)
{
    return Json{{"compute", b.compute},
                {"weights_read", b.weightsRead},
                {"attention", b.attention},
                {"tp", b.tp},
                {"ep", b.ep},
                {"pp", b.pp},
                {"kv_transfer", b.kvTransfer},
                {"overhead", b.overhead}};
}

Json memoryJson(const ServingMemoryUse &m)
{
    return Json{{"weights", m.weightsGiB},
                {"kv_cache", m.kvCacheGiB},
                {"activations", m.activationsGiB}};
}

// One link as a one-line JSON object.
void appendLink(std::string &s,
                const Topology &t,
                const ServingLinks &l,
                const std::vector<float> &moment,
                TierNames &tiers,
                int id)
{
    const std::size_t i = static_cast<std::size_t>(id);
    const LinkLoads &d = l.decodeStep;
    appendLinkHead(s, t, tiers, id);
    s += ", \"bytes_per_decode_step\": ";
    appendNumber(s, double(d.bytesUp[i]) + double(d.bytesDown[i]));
    s += ", \"bytes_per_request\": ";
    appendNumber(s, double(l.requestBytes[i]));
    s += ", \"utilization\": ";
    appendNumber(s, double(d.utilization[i]));
    s += ", \"peak_utilization\": ";
    appendNumber(s, double(d.peakUtilization[i]));
    if (!moment.empty()) {
        s += ", \"utilization_at\": ";
        appendNumber(s, double(moment[i]));
    }
    s += '}';
}

// The links to list: every one, or the busiest.
std::vector<int> listed(const ServingLinks &l, const ReportOptions &o)
{
    if (o.links != LinkListing::All)
        return busiestServingLinks(l, o.busiest);
    std::vector<int> ids(l.decodeStep.utilization.size());
    for (std::size_t i = 0; i < ids.size(); ++i)
        ids[i] = static_cast<int>(i);
    return ids;
}

Json tiers(const Topology &t, const ServingLinks &l)
{
    Json out = Json::array();
    for (const ServingTierSummary &x : summarizeServingLinks(t, l)) {
        const LinkTierSummary &s = x.decodeStep;
        out.push_back({{"tier", s.tier.name()},
                       {"kind", toString(s.tier.kind)},
                       {"links", s.links},
                       {"loaded", s.loaded},
                       {"bytes_per_decode_step", s.bytesPerStep},
                       {"bytes_per_request", x.bytesPerRequest},
                       {"mean_utilization", s.meanUtilization},
                       {"max_utilization", s.maxUtilization}});
    }
    return out;
}

} // namespace

// The band as the range around the value: "\u00b15%", or "-38% / +62%" (TPOT's is a factor).
std::string servingBandText(const ServingBand &band)
{
    const double mid = 0.5 * (band.lowS + band.highS);
    if (band.highS <= 0 || mid <= 0)
        return "\u00b10%";
    const double value = band.highS / (1 + band.fraction);
    const double down = 1 - band.lowS / value, up = band.highS / value - 1;
    if (std::abs(down - up) < 0.005)
        return "\u00b1" + formatNumber(100 * up, 2) + "%";
    return "-" + formatNumber(100 * down, 2) + "% / +" + formatNumber(100 * up, 2) + "%";
}

std::vector<ServingTierSummary> summarizeServingLinks(const Topology &t, const ServingLinks &l)
{
    std::vector<double> request(kDeviceKinds * kDeviceKinds * kLinkKinds, 0.0);
    for (std::size_t i = 0; i < l.requestBytes.size(); ++i)
        request[static_cast<std::size_t>(t.linkEnds(static_cast<int>(i)))] += l.requestBytes[i];
    std::vector<ServingTierSummary> out;
    for (const LinkTierSummary &s : summarizeLinks(t, l.decodeStep))
        out.push_back({s, request[static_cast<std::size_t>(tierKey(s.tier))]});
    return out;
}

const std::array<ServingPartName, 8> &servingParts()
{
    static const std::array<ServingPartName, 8> parts = {{
            {"Compute", &ServingBreakdown::compute},
            {"Weights read", &ServingBreakdown::weightsRead},
            {"Attention", &ServingBreakdown::attention},
            {"TP", &ServingBreakdown::tp},
            {"EP", &ServingBreakdown::ep},
            {"PP", &ServingBreakdown::pp},
            {"KV transfer", &ServingBreakdown::kvTransfer},
            {"Overhead", &ServingBreakdown::overhead},
    }};
    return parts;
}

std::vector<int> busiestServingLinks(const ServingLinks &l, std::size_t count)
{
    const std::size_t n = l.decodeStep.utilization.size();
    std::vector<int> ids;
    for (std::size_t i = 0; i < n; ++i)
        if (l.decodeStep.utilization[i] > 0 || l.requestBytes[i] > 0)
            ids.push_back(static_cast<int>(i));
    const auto busier = [&](int a, int b) {
        const float ua = l.decodeStep.utilization[static_cast<std::size_t>(a)];
        const float ub = l.decodeStep.utilization[static_cast<std::size_t>(b)];
        if (ua != ub)
            return ua > ub;
        const float ra = l.requestBytes[static_cast<std::size_t>(a)];
        const float rb = l.requestBytes[static_cast<std::size_t>(b)];
        return ra != rb ? ra > rb : a < b;
    };
    const std::size_t keep = std::min(count, ids.size());
    std::partial_sort(ids.begin(),
                      ids.begin() + static_cast<std::ptrdiff_t>(keep),
                      ids.end(),
                      busier);
    ids.resize(keep);
    return ids;
}

const StepTimeline &servingMomentTimeline(const ServingEvaluation &e, bool atRequest)
{
    return atRequest ? e.requestTimeline : e.decodeTimeline;
}

std::vector<float> servingLoadsAt(const ServingEvaluation &e,
                                  const Topology &t,
                                  double at,
                                  bool atRequest)
{
    std::vector<float> out;
    const StepTimeline &timeline = servingMomentTimeline(e, atRequest);
    if (at >= 0 && !timeline.empty())
        utilizationAt(timeline, t, at, out);
    return out;
}

std::vector<std::string> servingPhasesAt(const ServingEvaluation &e, double at, bool atRequest)
{
    std::vector<std::string> names;
    const StepTimeline &timeline = servingMomentTimeline(e, atRequest);
    for (int i : timeline.runningAt(at)) {
        const std::string &name = timeline.phases[static_cast<std::size_t>(i)].name;
        if (std::find(names.begin(), names.end(), name) == names.end())
            names.push_back(name);
    }
    return names;
}

void writeServingJson(std::ostream &out,
                      const ServingEvaluation &e,
                      const Topology &t,
                      const ReportOptions &o)
{
    Json j;
    j["workload"] = "serving";
    j["phase"] = e.phase;
    j["disaggregated"] = e.disaggregated;
    j["ttft_s"] = e.ttftS;
    j["ttft_band_s"] = {e.ttftBand.lowS, e.ttftBand.highS};
    j["tpot_s"] = e.tpotS;
    j["tpot_band_s"] = {e.tpotBand.lowS, e.tpotBand.highS};
    j["band_basis"] = e.bandBasis;
    j["e2e_latency_s"] = e.e2eLatencyS;
    j["ttft_wait_s"] = e.ttftWaitS;
    j["decode_step_s"] = e.decodeStepS;
    j["output_tokens_per_s"] = e.outputTokensPerS;
    j["output_tokens_per_s_per_gpu"] = e.outputTokensPerSPerGpu;
    j["input_tokens_per_s_per_gpu"] = e.inputTokensPerSPerGpu;
    j["tokens_per_s_per_user"] = e.tokensPerSPerUser;
    j["requests_per_s"] = e.requestsPerS;
    j["gpus"] = e.gpus;
    j["concurrency"] = e.concurrency;
    j["decode_batch"] = e.decodeBatch;
    j["max_concurrency"] = e.maxConcurrency;
    j["accepted_tokens_per_step"] = e.acceptedTokensPerStep;
    j["memory_gib_per_gpu"] = e.memory.totalGiB();
    j["hbm_gib"] = e.memory.hbmGiB;
    j["memory_breakdown_gib"] = memoryJson(e.memory);
    j["kv_pool_gib"] = e.memory.kvPoolGiB;
    if (e.disaggregated) {
        j["prefill_memory_gib_per_gpu"] = e.prefillMemory.totalGiB();
        j["prefill_memory_breakdown_gib"] = memoryJson(e.prefillMemory);
    }
    j["breakdown_s"] = {{"decode", breakdownJson(e.decode)}, {"prefill", breakdownJson(e.prefill)}};
    j["tp_method"] = e.tpMethod;
    j["ep_method"] = e.epMethod;
    if (e.costPerMillionOutputTokens > 0)
        j["cost_per_million_output_tokens"] = e.costPerMillionOutputTokens;
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
    j["link_tiers"] = links ? tiers(t, *e.links) : Json::array();
    const std::vector<float> moment = links ? servingLoadsAt(e, t, o.at, o.atRequest)
                                            : std::vector<float>{};
    if (!moment.empty()) {
        j["at_s"] = o.at;
        // Which timeline the moment is of, and what runs then.
        j["at_timeline"] = o.atRequest ? "request" : "decode_step";
        j["at_phases"] = servingPhasesAt(e, o.at, o.atRequest);
    }

    std::string head = jsonForTerminal(j.dump(2, ' ', false, Json::error_handler_t::replace));
    head.resize(head.size() - 2); // "\n}"
    Buffered b(out);
    std::string &s = b.text();
    s += head;
    s += ",\n  \"links\": [";
    bool first = true;
    if (links) {
        TierNames names;
        for (int id : listed(*e.links, o)) {
            s += first ? "\n    " : ",\n    ";
            first = false;
            appendLink(s, t, *e.links, moment, names, id);
            b.maybeFlush();
        }
    }
    s += first ? "]" : "\n  ]";
    if (o.timeline) {
        appendTimelineJson(s, b, e.decodeTimeline, o, "timeline");
        appendTimelineJson(s, b, e.requestTimeline, o, "request_timeline");
    }
    s += "\n}\n";
}

void writeServingText(std::ostream &out,
                      const ServingEvaluation &e,
                      const Topology &t,
                      const ReportOptions &o)
{
    Buffered b(out);
    std::string &s = b.text();
    const auto ms = [](double x) { return formatSeconds(x); };
    const auto band = [](const ServingBand &b) { return " " + servingBandText(b); };
    s += terminalText(shownTitle(o.title)) + "\n";
    s += "  serving           " + std::to_string(e.gpus) + " GPUs, "
         + (e.disaggregated ? "disaggregated prefill and decode, " : "")
         + (e.phase != "both" ? e.phase + " phase only, " : "") + "concurrency "
         + formatNumber(e.concurrency, 4) + " per replica (the KV cache holds "
         + std::to_string(e.maxConcurrency) + "), decode batch " + formatNumber(e.decodeBatch, 4)
         + "\n";
    s += "  TTFT              " + ms(e.ttftS) + band(e.ttftBand) + "  (waiting " + ms(e.ttftWaitS)
         + ", prefill " + ms(e.prefill.sum() - e.prefill.kvTransfer) + ", KV transfer "
         + ms(e.prefill.kvTransfer) + ")\n";
    s += "  TPOT              " + ms(e.tpotS) + band(e.tpotBand) + "  ("
         + formatNumber(e.tokensPerSPerUser, 4) + " tokens/s per user; decode step "
         + ms(e.decodeStepS)
         + (e.acceptedTokensPerStep > 1
                    ? ", " + formatNumber(e.acceptedTokensPerStep, 3) + " tokens accepted per step"
                    : std::string())
         + ")\n";
    s += "  throughput        " + formatNumber(e.outputTokensPerSPerGpu, 4)
         + " output tokens/s per GPU (" + formatNumber(e.outputTokensPerS, 4) + " in all), "
         + formatNumber(e.inputTokensPerSPerGpu, 4) + " input tokens/s per GPU, "
         + formatNumber(e.requestsPerS, 4) + " requests/s\n";
    s += "  end to end        " + ms(e.e2eLatencyS) + " per request\n";
    s += "  memory per GPU    " + formatNumber(e.memory.totalGiB(), 3) + " GiB of "
         + formatNumber(e.memory.hbmGiB, 3) + ": weights " + formatNumber(e.memory.weightsGiB, 3)
         + ", KV cache " + formatNumber(e.memory.kvCacheGiB, 3) + " (pool "
         + formatNumber(e.memory.kvPoolGiB, 3) + "), activations "
         + formatNumber(e.memory.activationsGiB, 3) + "\n";
    const auto parts = [](const ServingBreakdown &x) {
        return "compute " + formatSeconds(x.compute) + ", weights read "
               + formatSeconds(x.weightsRead) + ", attention " + formatSeconds(x.attention)
               + ", TP " + formatSeconds(x.tp) + ", EP " + formatSeconds(x.ep) + ", PP "
               + formatSeconds(x.pp)
               + (x.kvTransfer > 0 ? ", KV transfer " + formatSeconds(x.kvTransfer) : std::string())
               + ", overhead " + formatSeconds(x.overhead);
    };
    s += "  decode step       " + parts(e.decode)
         + (e.tpMethod.empty() ? std::string() : "  (TP: " + e.tpMethod + ")")
         + (e.epMethod.empty() ? std::string() : "  (EP: " + e.epMethod + ")") + "\n";
    s += "  prefill           " + parts(e.prefill) + "\n";
    if (e.costPerMillionOutputTokens > 0)
        s += "  cost              $" + formatNumber(e.costPerMillionOutputTokens, 3)
             + " per million output tokens\n";
    s += "  band              " + terminalText(e.bandBasis) + "\n";
    if (o.links != LinkListing::None && e.links) {
        const ServingLinks &l = *e.links;
        s += "  links             " + grouped(l.decodeStep.size()) + " links, "
             + grouped(l.decodeStep.loaded)
             + " with traffic; utilization = busiest direction's bytes per second / rate\n";
        for (int id : listed(l, o)) {
            const std::size_t i = static_cast<std::size_t>(id);
            s += "    " + padded(percent(l.decodeStep.utilization[i]), 8, true) + "  "
                 + terminalText(t.linkName(id)) + " (" + toString(t.links()[i].kind) + ", "
                 + bytesText(double(l.decodeStep.bytesUp[i]) + double(l.decodeStep.bytesDown[i]))
                 + " per decode step, " + bytesText(l.requestBytes[i]) + " per request)\n";
            b.maybeFlush();
        }
    }
    for (const Warning &w : e.warnings)
        s += std::string("  ") + severityName(w.severity) + ": " + terminalText(w.message) + "\n";
}

// The serving report as documents: Markdown for a design review, CSV of the per-link loads.

void writeServingMarkdown(std::ostream &out,
                          const Layout &layout,
                          const ServingEvaluation &e,
                          const Topology &t,
                          const ReportOptions &o)
{
    Buffered b(out);
    std::string &s = b.text();
    const auto sec = [](double x) { return formatSeconds(x); };
    s += "# " + markdownText(shownTitle(o.title)) + "\n\n";
    s += "Serving on " + std::to_string(e.gpus) + " GPUs"
         + (e.disaggregated ? ", prefill and decode on separate pools" : "")
         + (e.phase != "both" ? ", the " + e.phase + " phase only" : "") + ": concurrency "
         + formatNumber(e.concurrency, 4) + " per replica (the KV cache holds "
         + std::to_string(e.maxConcurrency) + "), decode batch " + formatNumber(e.decodeBatch, 4)
         + ".\n\n";
    // The rates go as 1 / TPOT: their band is TPOT's, inverted.
    const auto rate = [&](double value) {
        if (e.tpotBand.lowS <= 0 || e.tpotS <= 0)
            return std::string("\u00b10%");
        return formatNumber(value * e.tpotS / e.tpotBand.highS, 4) + " to "
               + formatNumber(value * e.tpotS / e.tpotBand.lowS, 4) + " ("
               + servingBandText({value * e.tpotS / e.tpotBand.highS,
                                  value * e.tpotS / e.tpotBand.lowS,
                                  e.tpotS / e.tpotBand.lowS - 1})
               + ")";
    };
    const auto latency = [&](const ServingBand &band) {
        return sec(band.lowS) + " to " + sec(band.highS) + " (" + servingBandText(band) + ")";
    };
    s += "| Quantity | Value | Band |\n|---|---|---|\n";
    s += "| TTFT | " + sec(e.ttftS) + " | " + latency(e.ttftBand) + " |\n";
    s += "| TPOT | " + sec(e.tpotS) + " | " + latency(e.tpotBand) + " |\n";
    s += "| Output tokens/s per GPU | " + formatNumber(e.outputTokensPerSPerGpu, 4) + " | "
         + rate(e.outputTokensPerSPerGpu) + " |\n";
    s += "| Tokens/s per user | " + formatNumber(e.tokensPerSPerUser, 4) + " | "
         + rate(e.tokensPerSPerUser) + " |\n";
    s += "| Output tokens/s | " + formatNumber(e.outputTokensPerS, 4) + " | "
         + rate(e.outputTokensPerS) + " |\n";
    s += "| Input tokens/s per GPU | " + formatNumber(e.inputTokensPerSPerGpu, 4) + " | "
         + rate(e.inputTokensPerSPerGpu) + " |\n";
    s += "| Requests/s | " + formatNumber(e.requestsPerS, 4) + " | " + rate(e.requestsPerS)
         + " |\n";
    s += "| End-to-end latency | " + sec(e.e2eLatencyS) + " | |\n";
    s += "| Decode step | " + sec(e.decodeStepS)
         + (e.acceptedTokensPerStep > 1
                    ? " (" + formatNumber(e.acceptedTokensPerStep, 3) + " tokens accepted)"
                    : std::string())
         + " | |\n";
    s += "| Memory per GPU | " + formatNumber(e.memory.totalGiB(), 3) + " GiB of "
         + formatNumber(e.memory.hbmGiB, 3) + " GiB | |\n";
    if (e.costPerMillionOutputTokens > 0)
        s += "| Cost | $" + formatNumber(e.costPerMillionOutputTokens, 3)
             + " per million output tokens | |\n";
    if (!e.bandBasis.empty())
        s += "\nBand: " + markdownText(e.bandBasis) + "\n";

    s += "\n## Where the time goes (seconds)\n\nOne decode step of the batch; one request's "
         "prefill (with its KV transfer when disaggregated). TTFT adds "
         + sec(e.ttftWaitS) + " of waiting.\n\n| Part | Decode step | Prefill |\n|---|---:|---:|\n";
    for (const auto &[name, member] : servingParts())
        s += std::string("| ") + name + " | " + sec(e.decode.*member) + " | "
             + sec(e.prefill.*member) + " |\n";
    s += "| Total | " + sec(e.decode.sum()) + " | " + sec(e.prefill.sum()) + " |\n";
    if (!e.tpMethod.empty())
        s += "\nTP all-reduces in a decode step: " + markdownText(e.tpMethod) + ".\n";
    if (!e.epMethod.empty())
        s += "\nMoE dispatch and combine in a decode step: " + markdownText(e.epMethod) + ".\n";

    s += "\n## Memory per GPU (GiB)\n\n| GPUs | Weights | KV cache | Activations | Total | KV "
         "pool | HBM |\n|---|---:|---:|---:|---:|---:|---:|\n";
    const auto memory = [&](const char *pool, const ServingMemoryUse &m) {
        s += std::string("| ") + pool + " | " + formatNumber(m.weightsGiB, 3) + " | "
             + formatNumber(m.kvCacheGiB, 3) + " | " + formatNumber(m.activationsGiB, 3) + " | "
             + formatNumber(m.totalGiB(), 3) + " | " + formatNumber(m.kvPoolGiB, 3) + " | "
             + formatNumber(m.hbmGiB, 3) + " |\n";
    };
    memory(e.disaggregated ? "Decode pool" : "Every GPU", e.memory);
    if (e.disaggregated)
        memory("Prefill pool", e.prefillMemory);

    if (e.disaggregated && layout.serving && layout.serving->disaggregated) {
        s += "\n## Pools\n\n| Pool | GPUs | TP | EP | PP | Replicas | Attention DP "
             "|\n|---|---:|---:|---:|---:|---:|---:|\n";
        const auto pool = [&](const char *name, const ServingPool &p) {
            s += std::string("| ") + name + " | " + std::to_string(p.gpus()) + " | "
                 + std::to_string(p.tp) + " | " + std::to_string(p.ep) + " | "
                 + std::to_string(p.pp) + " | " + std::to_string(p.replicas) + " | "
                 + (p.attentionDp ? std::to_string(*p.attentionDp) : std::string("1")) + " |\n";
        };
        pool("Prefill", layout.serving->disaggregated->prefill);
        pool("Decode", layout.serving->disaggregated->decode);
    }

    if (o.links != LinkListing::None && e.links) {
        const ServingLinks &l = *e.links;
        const LinkLoads &d = l.decodeStep;
        const std::vector<float> moment = servingLoadsAt(e, t, o.at, o.atRequest);
        s += "\n## Links\n\n" + grouped(d.size()) + " links, " + grouped(d.loaded)
             + " with traffic in a decode step. Utilization = the busiest direction's bytes per "
               "second in steady state (decode steps and prefills) / the link's rate.";
        if (!moment.empty()) {
            const std::vector<std::string> doing = servingPhasesAt(e, o.at, o.atRequest);
            std::string running;
            for (const std::string &d : doing)
                running += (running.empty() ? "" : "; ") + d;
            s += " *At t* is the load at " + sec(o.at) + " into "
                 + (o.atRequest ? "one request's " + sec(e.requestTimeline.stepS)
                                          + " life (waiting, prefill, KV transfer, decode)"
                                : "the " + sec(e.decodeStepS) + " decode step")
                 + (running.empty() ? std::string(".") : ", during " + markdownText(running) + ".");
        }
        s += "\n\n| Tier | Kind | Links | Loaded | Bytes/decode step | Bytes/request | Mean | Max "
             "|\n|---|---|---:|---:|---:|---:|---:|---:|\n";
        for (const ServingTierSummary &x : summarizeServingLinks(t, l))
            s += "| " + x.decodeStep.tier.name() + " | " + toString(x.decodeStep.tier.kind) + " | "
                 + grouped(x.decodeStep.links) + " | " + grouped(x.decodeStep.loaded) + " | "
                 + bytesText(x.decodeStep.bytesPerStep) + " | " + bytesText(x.bytesPerRequest)
                 + " | " + percent(x.decodeStep.meanUtilization) + " | "
                 + percent(x.decodeStep.maxUtilization) + " |\n";
        const std::vector<int> ids = listed(l, o);
        if (!ids.empty()) {
            s += o.links == LinkListing::All
                         ? std::string("\n### Every link\n\n")
                         : "\n### Busiest links (" + std::to_string(ids.size()) + ")\n\n";
            s += "| Link | Kind | Bytes/decode step | Bytes/request | Utilization | Peak |";
            s += moment.empty() ? "\n|---|---|---:|---:|---:|---:|\n"
                                : " At t |\n|---|---|---:|---:|---:|---:|---:|\n";
        }
        for (int id : ids) {
            const std::size_t i = static_cast<std::size_t>(id);
            s += "| " + markdownText(t.linkName(id)) + " | " + toString(t.links()[i].kind) + " | "
                 + bytesText(double(d.bytesUp[i]) + double(d.bytesDown[i])) + " | "
                 + bytesText(l.requestBytes[i]) + " | " + percent(d.utilization[i]) + " | "
                 + percent(d.peakUtilization[i])
                 + (moment.empty() ? "" : " | " + percent(moment[i])) + " |\n";
            b.maybeFlush();
        }
    }
    if (!e.warnings.empty()) {
        s += "\n## Warnings\n\n";
        for (const Warning &w : e.warnings)
            s += std::string("- **") + severityName(w.severity) + "**: " + markdownText(w.message)
                 + (w.costS > 0 ? " (costs " + sec(w.costS) + ")" : std::string()) + "\n";
    }
    if (!e.assumptions.empty()) {
        s += "\n## Assumptions\n\n";
        for (const std::string &a : e.assumptions)
            s += "- " + markdownText(a) + "\n";
    }
}

void writeServingCsv(std::ostream &out,
                     const ServingEvaluation &e,
                     const Topology &t,
                     bool allLinks,
                     double at,
                     bool atRequest)
{
    if (!e.links) {
        writeLoadsCsv(out, LinkLoads{}, t, allLinks, {}, nullptr);
        return;
    }
    writeLoadsCsv(out,
                  e.links->decodeStep,
                  t,
                  allLinks,
                  servingLoadsAt(e, t, at, atRequest),
                  &e.links->requestBytes);
}

} // namespace railyard::engine
