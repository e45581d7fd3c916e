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
    j["step_time_s"] = r.stepTimeS;
    j["tokens_per_s"] = r.tokensPerS;
    if (r.costPerMillionTokens > 0)
        j["cost_per_million_tokens"] = r.costPerMillionTokens;
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
    if (!impact.healthy.ok) {
        j["healthy_error"] = impact.healthy.error;
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
        others.push_back({{"kind", r.kind},
                          {"summary", r.summary},
                          {"step_time_s", r.stepTimeS},
                          {"tokens_per_s", r.tokensPerS},
                          {"recovered", r.recovered},
                          {"idle_gpus", r.idleGpus},
                          {"price", r.price}});
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
    if (!impact.healthy.ok) {
        s += "  (the healthy cluster cannot be priced: " + terminalText(impact.healthy.error)
             + ")\n";
        out << s;
        return;
    }
    for (const ImpactMetric &m : impact.metrics)
        s += "  " + padded(m.key, 26) + changeText(m.before, m.after, m.key == "step_time_s")
             + "  (" + describeChange(m.before, m.after, "") + ")\n";
    s += "  exposed seconds, healthy -> with the faults\n";
    for (const BreakdownChange &b : impact.breakdown)
        if (b.before != 0 || b.after != 0)
            s += "    " + padded(b.dim, 12) + changeText(b.before, b.after, true) + "\n";
    if (!impact.links.empty()) {
        s += "  links whose load changed most (utilization, bytes per step)\n";
        for (const LinkChange &c : impact.links)
            s += "    " + padded(percent(c.utilizationA) + " -> " + percent(c.utilizationB), 20)
                 + terminalText(t.linkName(c.link)) + " (" + bytesText(c.bytesA) + " -> "
                 + bytesText(c.bytesB) + ")\n";
    }
    if (impact.recovery) {
        const Recovery &r = *impact.recovery;
        s += "  recovery: " + terminalText(r.summary) + "\n    step " + formatSeconds(r.stepTimeS)
             + ", " + formatNumber(100 * r.recovered, 3)
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

Json sweepJson(const SweepResult &sweep, std::size_t top)
{
    Json j;
    j["what_if"] = toString(sweep.kind);
    if (!sweep.ok) {
        j["error"] = sweep.error;
        return j;
    }
    j["baseline_step_time_s"] = sweep.baselineStepS;
    j["baseline_tokens_per_s"] = sweep.baselineTokensPerS;
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
        if (e.ok) {
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
    s += "  baseline step " + formatSeconds(sweep.baselineStepS) + "; "
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
        if (e.ok)
            s += "step " + formatSeconds(e.stepTimeS) + "  (" + (e.costFraction > 0 ? "-" : "+")
                 + formatNumber(100 * std::abs(e.costFraction), 3) + "% throughput)";
        else
            s += "cannot run: " + terminalText(e.error);
        s += "\n";
    }
    out << s;
}

} // namespace railyard::engine
