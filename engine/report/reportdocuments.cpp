#include "report/report.h"

#include "base/safetext.h"
#include "base/showntext.h"
#include "base/units.h"
#include "report/reportformat.h"
#include "step/timeline.h"

#include <ostream>

// The report as documents for people and spreadsheets: Markdown for a design review, CSV of the
// per-link loads. The JSON and text writers are in report.cpp.

namespace railyard::engine {

using namespace reportformat;

void writeEvaluationMarkdown(std::ostream &out,
                             const Evaluation &e,
                             const Topology &t,
                             const ReportOptions &o)
{
    Buffered b(out);
    std::string &s = b.text();
    s += "# " + markdownText(shownTitle(o.title)) + "\n\n";
    s += "| Quantity | Value |\n|---|---|\n";
    s += "| Step time | " + formatSeconds(e.stepTimeS) + " \u00b1"
         + formatNumber(100 * e.stepTimeBand.fraction, 2) + "% ("
         + formatSeconds(e.stepTimeBand.lowS) + " to " + formatSeconds(e.stepTimeBand.highS)
         + ") |\n";
    s += "| Tokens per step | " + formatNumber(e.tokensPerStep, 4) + " |\n";
    s += "| Tokens/s | " + formatNumber(e.tokensPerS, 4) + " ("
         + formatNumber(e.tokensPerSPerGpu, 4) + " per GPU) |\n";
    s += "| MFU | " + formatNumber(100 * e.mfu, 3) + "% (" + formatNumber(e.modelTflopsPerGpu, 4)
         + " model TFLOP/s per GPU" + mfuFp8Note(e) + ") |\n";
    s += "| Memory per GPU | " + formatNumber(e.memory.totalGiB(), 3) + " GiB of "
         + formatNumber(e.hbmGiB, 3) + " GiB |\n";
    if (e.costPerStep > 0)
        s += "| Cost | $" + formatNumber(e.costPerStep, 4) + " per step, $"
             + formatNumber(e.costPerMillionTokens, 3) + " per million tokens |\n";
    if (!e.stepTimeBand.basis.empty())
        s += "\nStep-time band: " + markdownText(e.stepTimeBand.basis) + "\n";

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
        const std::vector<float> moment = linkLoadsAt(e, t, o.at);
        s += "\n## Links\n\n" + grouped(loads.size()) + " links, " + grouped(loads.loaded)
             + " with traffic. Utilization = busiest direction / (rate \u00d7 step time).";
        if (!moment.empty())
            s += " *At t* is the load at " + formatSeconds(o.at) + " into the "
                 + formatSeconds(e.stepTimeS) + " step: the busiest direction's rate then over the "
                 + "link's rate.";
        s += "\n\n";
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
            s += "| " + markdownText(t.linkName(id)) + " | " + toString(t.links()[i].kind) + " | "
                 + bytesText(double(loads.bytesUp[i]) + double(loads.bytesDown[i])) + " | "
                 + percent(loads.utilization[i]) + " | " + percent(loads.peakUtilization[i])
                 + (moment.empty() ? "" : " | " + percent(moment[i])) + " |\n";
            b.maybeFlush();
        };
        if (o.links == LinkListing::All || !ids.empty())
            s += moment.empty() ? "| Link | Kind | Bytes/step | Utilization | Peak |\n"
                                  "|---|---|---:|---:|---:|\n"
                                : "| Link | Kind | Bytes/step | Utilization | Peak | At t |\n"
                                  "|---|---|---:|---:|---:|---:|\n";
        if (o.links == LinkListing::All)
            for (std::size_t i = 0; i < loads.size(); ++i)
                row(static_cast<int>(i));
        for (int id : ids)
            row(id);
    }
    if (!e.warnings.empty()) {
        s += "\n## Warnings\n\n";
        for (const Warning &w : e.warnings)
            s += std::string("- **") + severityName(w.severity) + "**: " + markdownText(w.message)
                 + "\n";
    }
    if (!e.assumptions.empty()) {
        s += "\n## Assumptions\n\n";
        for (const std::string &a : e.assumptions)
            s += "- " + markdownText(a) + "\n";
    }
}

void reportformat::writeLoadsCsv(std::ostream &out,
                                 const LinkLoads &loads,
                                 const Topology &t,
                                 bool allLinks,
                                 const std::vector<float> &moment,
                                 const std::vector<float> *perRequest)
{
    Buffered b(out);
    std::string &s = b.text();
    s += "id,name,kind,tier,bytes_per_step,bytes_up,bytes_down,utilization,peak_utilization";
    s += moment.empty() ? "" : ",utilization_at";
    s += perRequest ? ",bytes_per_request\r\n" : "\r\n";
    TierNames tiers;
    for (std::size_t i = 0; i < loads.size(); ++i) {
        const float up = loads.bytesUp[i], down = loads.bytesDown[i];
        const float request = perRequest ? (*perRequest)[i] : 0.0f;
        if (!allLinks && up == 0 && down == 0 && request == 0)
            continue;
        const int id = static_cast<int>(i);
        appendNumber(s, id);
        s += ',';
        appendCsvText(s, t.linkName(id));
        s += ',';
        s += toString(t.links()[i].kind);
        s += ',';
        s += tiers(linkTier(t, id));
        for (const double v : {double(up) + double(down),
                               double(up),
                               double(down),
                               double(loads.utilization[i]),
                               double(loads.peakUtilization[i])}) {
            s += ',';
            appendNumber(s, v);
        }
        if (!moment.empty()) {
            s += ',';
            appendNumber(s, double(moment[i]));
        }
        if (perRequest) {
            s += ',';
            appendNumber(s, double(request));
        }
        s += "\r\n";
        b.maybeFlush();
    }
}

void writeLinkLoadsCsv(
        std::ostream &out, const Evaluation &e, const Topology &t, bool allLinks, double at)
{
    if (!e.links) {
        writeLoadsCsv(out, LinkLoads{}, t, allLinks, {});
        return;
    }
    writeLoadsCsv(out, *e.links, t, allLinks, linkLoadsAt(e, t, at));
}

} // namespace railyard::engine
