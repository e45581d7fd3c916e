#include "faults/faultreport.h"

#include "base/safetext.h"
#include "base/units.h"
#include "report/reportformat.h"
#include "step/evaluationdiff.h"

#include <cmath>
#include <ostream>

namespace railyard::engine {

using namespace reportformat;

namespace {

Json resolvedJson(const ResolvedFault &f, const Topology &t)
{
    Json j;
    j["fault"] = faultsToJson({f.fault}).front();
    j["path"] = faultPath(f.index);
    j["description"] = f.fault.describe();
    Json devices = Json::array();
    for (std::size_t i = 0; i < f.devices.size() && i < 64; ++i)
        devices.push_back(t.deviceName(f.devices[i]));
    j["devices"] = devices;
    j["device_count"] = f.devices.size();
    Json links = Json::array();
    for (std::size_t i = 0; i < f.links.size() && i < 64; ++i)
        links.push_back(f.links[i]);
    j["links"] = links; // ids, as evaluate --links all prints them (the first 64)
    j["link_count"] = f.links.size();
    j["gpus"] = f.gpus.size();
    return j;
}

Json recoveryJson(const Recovery &r, const Layout &before)
{
    Json j;
    j["kind"] = r.kind;
    j["summary"] = r.summary;
    if (before.isServing()) {
        j["tpot_s"] = r.stepTimeS;
        j["ttft_s"] = r.ttftS;
        j["output_tokens_per_s"] = r.tokensPerS;
        if (r.costPerMillionTokens > 0)
            j["cost_per_million_output_tokens"] = r.costPerMillionTokens;
    } else {
        j["step_time_s"] = r.stepTimeS;
        j["tokens_per_s"] = r.tokensPerS;
        if (r.costPerMillionTokens > 0)
            j["cost_per_million_tokens"] = r.costPerMillionTokens;
    }
    j["recovered"] = r.recovered;
    j["healthy_gain"] = r.healthyGain;
    j["idle_gpus"] = r.idleGpus;
    j["price"] = r.price;
    j["layout_change"] = recoveryChangeJson(before, r.layout);
    return j;
}

std::string changeText(double before, double after, bool seconds)
{
    const std::string a = seconds ? formatSeconds(before) : formatNumber(before, 4);
    const std::string b = seconds ? formatSeconds(after) : formatNumber(after, 4);
    return a + " -> " + b;
}

} // namespace

bool impactMetricInSeconds(const std::string &key)
{
    return key == "step_time_s" || key == "tpot_s" || key == "ttft_s" || key == "slowest_tpot_s"
           || key == "slowest_ttft_s";
}

Json recoveryChangeJson(const Layout &before, const Layout &after)
{
    Json j = Json::object();
    const ParallelConfig &p = after.parallel;
    if (!(p == before.parallel)) {
        Json pj;
        pj["tp"] = p.tp;
        pj["cp"] = p.cp;
        pj["ep"] = p.ep;
        pj["pp"] = p.pp;
        pj["vp"] = p.vp;
        pj["dp"] = after.dataParallel();
        pj["order"] = p.order;
        j["parallel"] = pj;
    }
    if (after.training.globalBatch != before.training.globalBatch)
        j["training"] = {{"global_batch", after.training.globalBatch}};
    if (after.mapping != before.mapping)
        j["mapping"] = after.mapping;
    if (after.serving && before.serving) {
        // Serving: the replicas of a disaggregated pool, and the requests in flight per replica.
        const ServingConfig &a = *after.serving, &b = *before.serving;
        Json sj = Json::object();
        if (a.concurrency != b.concurrency && a.concurrency)
            sj["concurrency"] = *a.concurrency;
        if (a.disaggregated && b.disaggregated && !(*a.disaggregated == *b.disaggregated))
            sj["disaggregated"] = {{"prefill", {{"replicas", a.disaggregated->prefill.replicas}}},
                                   {"decode", {{"replicas", a.disaggregated->decode.replicas}}}};
        if (!sj.empty())
            j["serving"] = sj;
    }
    return j;
}

Json faultImpactJson(const FaultImpact &impact, const Topology &t)
{
    Json j;
    Json faults = Json::array();
    for (const ResolvedFault &f : t.faults())
        faults.push_back(resolvedJson(f, t));
    j["faults"] = faults;
    j["rerouted"] = impact.rerouted;
    j["serving"] = impact.serving;
    if (!impact.jobChanges.empty())
        j["job_changes"] = impact.jobChanges;
    if (!impact.priced()) {
        j["healthy_error"] = impact.error();
        return j;
    }
    Json metrics = Json::object();
    for (const ImpactMetric &m : impact.metrics)
        metrics[m.key] = {{"before", m.before},
                          {"after", m.after},
                          {"change", m.before != 0 ? m.after / m.before - 1 : 0.0}};
    j["metrics"] = metrics;
    Json breakdown = Json::object();
    for (const BreakdownChange &b : impact.breakdown)
        breakdown[b.dim] = {{"before", b.before}, {"after", b.after}, {"delta", b.after - b.before}};
    j["breakdown_s"] = breakdown;
    Json links = Json::array();
    for (const LinkChange &c : impact.links) {
        const Link &k = t.links()[static_cast<std::size_t>(c.link)];
        links.push_back({{"id", c.link},
                         {"name", t.linkName(c.link)},
                         {"kind", toString(k.kind)},
                         {"health", k.health},
                         {"bytes_per_step_before", c.bytesA},
                         {"bytes_per_step_after", c.bytesB},
                         {"utilization_before", c.utilizationA},
                         {"utilization_after", c.utilizationB}});
    }
    j["links_changed"] = links;
    if (impact.recovery)
        j["recovery"] = recoveryJson(*impact.recovery, impact.layout);
    else
        j["recovery"] = nullptr;
    if (!impact.recoveryNote.empty())
        j["recovery_note"] = impact.recoveryNote;
    // The others that beat the faulted job, best first (without their layout changes).
    Json others = Json::array();
    for (std::size_t i = 1; i < impact.consideredRecoveries.size() && i <= 4; ++i) {
        const Recovery &r = impact.consideredRecoveries[i];
        Json o = {{"kind", r.kind},
                  {"summary", r.summary},
                  {"recovered", r.recovered},
                  {"idle_gpus", r.idleGpus},
                  {"price", r.price}};
        if (impact.serving) {
            o["tpot_s"] = r.stepTimeS;
            o["ttft_s"] = r.ttftS;
            o["output_tokens_per_s"] = r.tokensPerS;
        } else {
            o["step_time_s"] = r.stepTimeS;
            o["tokens_per_s"] = r.tokensPerS;
        }
        others.push_back(std::move(o));
    }
    j["other_recoveries"] = others;
    return j;
}

void writeFaultImpactText(std::ostream &out, const FaultImpact &impact, const Topology &t)
{
    std::string s = "faults\n";
    for (const ResolvedFault &f : t.faults())
        s += "  " + terminalText(f.fault.describe()) + "\n";
    for (const std::string &r : impact.rerouted)
        s += "  rerouted: " + terminalText(r) + "\n";
    for (const std::string &r : impact.jobChanges)
        s += "  job: " + terminalText(r) + "\n";
    if (!impact.priced()) {
        s += "  (cannot price the layout with and without its faults: "
             + terminalText(impact.error()) + ")\n";
        out << s;
        return;
    }
    for (const ImpactMetric &m : impact.metrics)
        s += "  " + padded(m.key, 32) + changeText(m.before, m.after, impactMetricInSeconds(m.key))
             + "  (" + describeChange(m.before, m.after, "") + ")\n";
    s += impact.serving ? "  seconds of one decode step and of one request's prefill, healthy -> "
                          "with the faults\n"
                        : "  exposed seconds, healthy -> with the faults\n";
    for (const BreakdownChange &b : impact.breakdown)
        if (b.before != 0 || b.after != 0)
            s += "    " + padded(b.dim, impact.serving ? 22 : 12)
                 + changeText(b.before, b.after, true) + "\n";
    if (!impact.links.empty()) {
        s += impact.serving ? "  links whose load changed most (utilization, bytes per decode "
                              "step)\n"
                            : "  links whose load changed most (utilization, bytes per step)\n";
        for (const LinkChange &c : impact.links)
            s += "    " + padded(percent(c.utilizationA) + " -> " + percent(c.utilizationB), 20)
                 + terminalText(t.linkName(c.link)) + " (" + bytesText(c.bytesA) + " -> "
                 + bytesText(c.bytesB) + ")\n";
    }
    if (impact.recovery) {
        const Recovery &r = *impact.recovery;
        if (impact.serving)
            s += "  recovery: " + terminalText(r.summary) + "\n    TPOT "
                 + formatSeconds(r.stepTimeS) + ", TTFT " + formatSeconds(r.ttftS) + ", "
                 + formatNumber(100 * r.recovered, 3)
                 + "% of the lost output tokens/s back; price: " + terminalText(r.price) + "\n";
        else
            s += "  recovery: " + terminalText(r.summary) + "\n    step "
                 + formatSeconds(r.stepTimeS) + ", " + formatNumber(100 * r.recovered, 3)
                 + "% of the lost throughput back; price: " + terminalText(r.price) + "\n";
        if (r.healthyGain > 0)
            s += "    (the same change makes the healthy job "
                 + formatNumber(100 * r.healthyGain, 3)
                 + "% faster too: the layout's own placement is not the fastest)\n";
    } else {
        s += "  recovery: " + terminalText(impact.recoveryNote) + "\n";
    }
    out << s;
}

namespace {

// What a fault does to what it names, in words: "down", "degraded to 50% of its rate", "runs
// 10% slow".
std::string faultEffect(const Fault &f)
{
    if (f.slowdown)
        return "runs " + formatNumber(100 * (*f.slowdown - 1), 3) + "% slow (a straggler)";
    if (f.state == FaultState::Down)
        return "down";
    if (f.rate)
        return "degraded to " + formatNumber(100 * *f.rate, 3) + "% of its rate";
    if (f.lanesDown)
        return "degraded: " + std::to_string(*f.lanesDown) + " lane"
               + (*f.lanesDown == 1 ? "" : "s") + " missing";
    return "degraded";
}

ReviewBlock reviewTable(std::vector<std::string> columns,
                        std::vector<bool> numeric,
                        std::vector<std::vector<std::string>> rows,
                        std::string caption = {})
{
    ReviewBlock b;
    b.kind = ReviewBlock::Kind::Table;
    b.text = std::move(caption);
    b.table.columns = std::move(columns);
    b.table.numeric = std::move(numeric);
    b.table.rows = std::move(rows);
    return b;
}

ReviewBlock reviewParagraph(std::string text)
{
    ReviewBlock b;
    b.text = std::move(text);
    return b;
}

std::string metricText(const ImpactMetric &m)
{
    return impactMetricInSeconds(m.key)
                   ? formatSeconds(m.before) + " -> " + formatSeconds(m.after)
                   : formatNumber(m.before, 4) + " -> " + formatNumber(m.after, 4);
}

} // namespace

ReviewSection faultReviewSection(const FaultImpact &impact, const Topology &t)
{
    ReviewSection s;
    s.heading = "Faults";
    std::vector<std::vector<std::string>> faults;
    for (const ResolvedFault &f : t.faults()) {
        const std::size_t elements = f.devices.size() + (f.devices.empty() ? f.links.size() : 0);
        faults.push_back({plainText(f.fault.targetText()),
                          faultEffect(f.fault),
                          grouped(elements),
                          grouped(f.gpus.size())});
    }
    const std::string count = std::to_string(faults.size())
                              + (faults.size() == 1 ? " fault" : " faults");
    if (impact.serving && impact.priced())
        s.blocks.push_back(reviewParagraph(
                "The layout has " + count + ". Serving, TPOT is "
                + formatSeconds(impact.servingHealthy.tpotS) + " on the healthy cluster and "
                + formatSeconds(impact.servingFaulted.tpotS) + " with the faults ("
                + describeChange(impact.servingHealthy.tpotS, impact.servingFaulted.tpotS, "TPOT")
                + "); output tokens/s per GPU "
                + formatNumber(impact.servingHealthy.outputTokensPerSPerGpu, 4) + " -> "
                + formatNumber(impact.servingFaulted.outputTokensPerSPerGpu, 4) + "."));
    else if (impact.serving)
        s.blocks.push_back(reviewParagraph("The layout has " + count
                                           + "; it cannot be priced with and without them: "
                                           + plainText(impact.error())));
    else if (impact.healthy.ok && impact.faulted.ok)
        s.blocks.push_back(reviewParagraph(
                "The layout has " + count + ". The step takes "
                + formatSeconds(impact.healthy.stepTimeS) + " on the healthy cluster and "
                + formatSeconds(impact.faulted.stepTimeS) + " with the faults ("
                + describeChange(impact.healthy.stepTimeS, impact.faulted.stepTimeS, "step time")
                + ")."));
    else if (!impact.healthy.ok)
        s.blocks.push_back(reviewParagraph("The layout has " + count
                                           + "; the healthy cluster cannot be priced: "
                                           + plainText(impact.healthy.error)));
    s.blocks.push_back(reviewTable({"Fault", "Effect", "Elements", "GPUs touched"},
                                   {false, false, true, true},
                                   std::move(faults)));
    if (!impact.rerouted.empty()) {
        ReviewBlock b;
        b.kind = ReviewBlock::Kind::Bullets;
        for (const std::string &r : impact.rerouted)
            b.items.push_back(plainText(r));
        b.text = "Rerouted around what is down:";
        s.blocks.push_back(reviewParagraph(b.text));
        b.text.clear();
        s.blocks.push_back(std::move(b));
    }
    for (const std::string &r : impact.jobChanges)
        s.blocks.push_back(reviewParagraph(plainText(r) + "."));
    if (!impact.priced())
        return s;
    std::vector<std::vector<std::string>> metrics;
    for (const ImpactMetric &m : impact.metrics)
        metrics.push_back({m.key, metricText(m), describeChange(m.before, m.after, "")});
    s.blocks.push_back(reviewTable({"Quantity", "Healthy -> with the faults", "Change"},
                                   {false, true, true},
                                   std::move(metrics)));
    std::vector<std::vector<std::string>> breakdown;
    for (const BreakdownChange &b : impact.breakdown)
        if (b.before != 0 || b.after != 0)
            breakdown.push_back({b.dim,
                                 formatSeconds(b.before),
                                 formatSeconds(b.after),
                                 (b.after >= b.before ? "+" : "-")
                                         + formatSeconds(std::fabs(b.after - b.before))});
    s.blocks.push_back(reviewTable({"Part", "Healthy exposed", "With the faults", "Change"},
                                   {false, true, true, true},
                                   std::move(breakdown),
                                   impact.serving ? "One decode step and one request's prefill, "
                                                    "part by part, healthy and with the faults."
                                                  : "The step breakdown, healthy and with the "
                                                    "faults."));
    if (!impact.links.empty()) {
        std::vector<std::vector<std::string>> links;
        for (const LinkChange &c : impact.links)
            links.push_back({plainText(t.linkName(c.link)),
                             percent(c.utilizationA),
                             percent(c.utilizationB),
                             bytesText(c.bytesA),
                             bytesText(c.bytesB)});
        s.blocks.push_back(
                reviewTable({"Link",
                             "Healthy utilization",
                             "With the faults",
                             "Healthy bytes",
                             "With the faults"},
                            {false, true, true, true, true},
                            std::move(links),
                            "Where the detoured traffic went: the links whose load changed most."));
    }
    if (impact.recovery) {
        const Recovery &r = *impact.recovery;
        s.blocks.push_back(
                reviewParagraph("Recovery: " + plainText(r.summary) + ". "
                                + (impact.serving ? "TPOT " + formatSeconds(r.stepTimeS) + ", TTFT "
                                                            + formatSeconds(r.ttftS)
                                                  : "Step " + formatSeconds(r.stepTimeS))
                                + ", " + formatNumber(100 * r.recovered, 3) + "% of the lost "
                                + (impact.serving ? "output tokens/s" : "throughput")
                                + " back; price: " + plainText(r.price) + "."));
    } else if (!impact.recoveryNote.empty()) {
        s.blocks.push_back(reviewParagraph("Recovery: " + plainText(impact.recoveryNote)));
    }
    return s;
}

Json sweepJson(const SweepResult &sweep, std::size_t top)
{
    Json j;
    j["what_if"] = toString(sweep.kind);
    if (!sweep.ok) {
        j["error"] = sweep.error;
        return j;
    }
    j["serving"] = sweep.serving;
    if (sweep.serving) {
        // Ranked by the output tokens/s per GPU lost.
        j["baseline_tpot_s"] = sweep.baselineStepS;
        j["baseline_ttft_s"] = sweep.baselineTtftS;
        j["baseline_output_tokens_per_s_per_gpu"] = sweep.baselineTokensPerS;
    } else {
        j["baseline_step_time_s"] = sweep.baselineStepS;
        j["baseline_tokens_per_s"] = sweep.baselineTokensPerS;
    }
    j["candidates"] = sweep.candidates;
    j["priced"] = sweep.priced;
    j["symmetry"] = sweep.symmetry;
    j["elapsed_s"] = sweep.elapsedS;
    j["cancelled"] = sweep.cancelled;
    Json ranked = Json::array();
    for (std::size_t i = 0; i < sweep.ranked.size() && i < top; ++i) {
        const SweepEntry &e = sweep.ranked[i];
        Json r;
        r["rank"] = i + 1;
        r["name"] = e.name;
        r["fault"] = faultsToJson({e.fault}).front();
        if (e.ok && sweep.serving) {
            r["tpot_s"] = e.stepTimeS;
            r["ttft_s"] = e.ttftS;
            r["output_tokens_per_s_per_gpu"] = e.tokensPerS;
            r["cost"] = e.costFraction;
        } else if (e.ok) {
            r["step_time_s"] = e.stepTimeS;
            r["tokens_per_s"] = e.tokensPerS;
            r["cost"] = e.costFraction;
        } else {
            r["error"] = e.error;
        }
        if (!e.pricedAs.empty())
            r["priced_as"] = e.pricedAs;
        ranked.push_back(std::move(r));
    }
    j["ranked"] = ranked;
    return j;
}

void writeSweepText(std::ostream &out, const SweepResult &sweep, std::size_t top)
{
    std::string s = std::string("what if: each of the ") + toString(sweep.kind) + " fails\n";
    if (!sweep.ok) {
        out << s << "  the layout cannot be priced: " << terminalText(sweep.error) << "\n";
        return;
    }
    s += (sweep.serving ? "  baseline TPOT " + formatSeconds(sweep.baselineStepS) + ", TTFT "
                                  + formatSeconds(sweep.baselineTtftS) + ", "
                                  + formatNumber(sweep.baselineTokensPerS, 4)
                                  + " output tokens/s per GPU; "
                        : "  baseline step " + formatSeconds(sweep.baselineStepS) + "; ")
         + std::to_string(sweep.candidates) + " candidates, " + std::to_string(sweep.priced)
         + " priced in " + formatSeconds(sweep.elapsedS) + (sweep.cancelled ? " (cancelled)" : "")
         + "\n";
    for (const std::string &n : sweep.symmetry)
        s += "  symmetry: " + terminalText(n) + "\n";
    s += "  the " + std::to_string(std::min(top, sweep.ranked.size()))
         + " that hurt this job most\n";
    for (std::size_t i = 0; i < sweep.ranked.size() && i < top; ++i) {
        const SweepEntry &e = sweep.ranked[i];
        s += "  " + padded(std::to_string(i + 1) + ".", 5) + padded(terminalText(e.name), 28);
        if (e.ok && sweep.serving)
            s += "TPOT " + formatSeconds(e.stepTimeS) + ", TTFT " + formatSeconds(e.ttftS) + "  ("
                 + (e.costFraction > 0 ? "-" : "+")
                 + formatNumber(100 * std::abs(e.costFraction), 3) + "% output tokens/s per GPU)";
        else if (e.ok)
            s += "step " + formatSeconds(e.stepTimeS) + "  (" + (e.costFraction > 0 ? "-" : "+")
                 + formatNumber(100 * std::abs(e.costFraction), 3) + "% throughput)";
        else
            s += "cannot run: " + terminalText(e.error);
        s += "\n";
    }
    out << s;
}

} // namespace railyard::engine
