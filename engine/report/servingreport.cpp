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
void appendLink(std::string &s, const Topology &t, const ServingLinks &l, TierNames &tiers, int id)
{
    const std::size_t i = static_cast<std::size_t>(id);
    const LinkLoads &d = l.decodeStep;
    s += "{\"id\": ";
    appendNumber(s, id);
    s += ", \"name\": ";
    appendJsonString(s, t.linkName(id));
    s += ", \"kind\": \"";
    s += toString(t.links()[i].kind);
    s += "\", \"tier\": \"";
    s += tiers(linkTier(t, id));
    s += "\", \"bytes_per_decode_step\": ";
    appendNumber(s, double(d.bytesUp[i]) + double(d.bytesDown[i]));
    s += ", \"bytes_per_request\": ";
    appendNumber(s, double(l.requestBytes[i]));
    s += ", \"utilization\": ";
    appendNumber(s, double(d.utilization[i]));
    s += ", \"peak_utilization\": ";
    appendNumber(s, double(d.peakUtilization[i]));
    s += '}';
}

// The links to list: every one, or the busiest by utilization (then by bytes per request).
std::vector<int> listed(const ServingLinks &l, const ReportOptions &o)
{
    const std::size_t n = l.decodeStep.utilization.size();
    std::vector<int> ids;
    if (o.links == LinkListing::All) {
        ids.resize(n);
        for (std::size_t i = 0; i < n; ++i)
            ids[i] = static_cast<int>(i);
        return ids;
    }
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
    const std::size_t keep = std::min(o.busiest, ids.size());
    std::partial_sort(ids.begin(),
                      ids.begin() + static_cast<std::ptrdiff_t>(keep),
                      ids.end(),
                      busier);
    ids.resize(keep);
    return ids;
}

Json tiers(const Topology &t, const ServingLinks &l)
{
    Json out = Json::array();
    std::vector<double> request(kDeviceKinds * kDeviceKinds * kLinkKinds, 0.0);
    for (std::size_t i = 0; i < l.requestBytes.size(); ++i)
        request[static_cast<std::size_t>(tierKey(linkTier(t, static_cast<int>(i))))]
                += l.requestBytes[i];
    for (const LinkTierSummary &s : summarizeLinks(t, l.decodeStep))
        out.push_back({{"tier", s.tier.name()},
                       {"kind", toString(s.tier.kind)},
                       {"links", s.links},
                       {"loaded", s.loaded},
                       {"bytes_per_decode_step", s.bytesPerStep},
                       {"bytes_per_request", request[static_cast<std::size_t>(tierKey(s.tier))]},
                       {"mean_utilization", s.meanUtilization},
                       {"max_utilization", s.maxUtilization}});
    return out;
}

} // namespace

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
            appendLink(s, t, *e.links, names, id);
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
    // The band as the range around the value (TPOT's is a factor: -37% / +59%).
    const auto band = [](const ServingBand &band) {
        const double mid = 0.5 * (band.lowS + band.highS);
        if (band.highS <= 0 || mid <= 0)
            return std::string(" \u00b10%");
        const double value = band.highS / (1 + band.fraction);
        const double down = 1 - band.lowS / value, up = band.highS / value - 1;
        if (std::abs(down - up) < 0.005)
            return " \u00b1" + formatNumber(100 * up, 2) + "%";
        return " -" + formatNumber(100 * down, 2) + "% / +" + formatNumber(100 * up, 2) + "%";
    };
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

} // namespace railyard::engine
