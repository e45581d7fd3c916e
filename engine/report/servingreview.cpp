#include "base/showntext.h"
#include "base/units.h"
#include "report/reportformat.h"
#include "report/reviewblocks.h"
#include "report/servingreport.h"
#include "serving/servingsetup.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

// The design-review report of a serving layout: what it says, in the structure the training
// report's writers lay out (reviewmarkdown.cpp, widgets/export/reviewpdf.cpp).

namespace railyard::engine {

using namespace reportformat;
using namespace reviewblocks;

namespace {

// "TP 8 · EP 8 · PP 1 · 4 replicas · attention DP 8"
std::string poolLine(const ServingPoolShape &p)
{
    std::string line = "TP " + std::to_string(p.tp);
    if (p.ep > 1)
        line += kDot + std::string("EP ") + std::to_string(p.ep);
    if (p.pp > 1)
        line += kDot + std::string("PP ") + std::to_string(p.pp);
    line += kDot + std::to_string(p.replicas) + (p.replicas == 1 ? " replica" : " replicas");
    if (p.attentionDp > 1)
        line += kDot + std::string("attention DP ") + std::to_string(p.attentionDp);
    return line;
}

// "deepseek-r1 · prefill TP 8 × 2 replicas · decode TP 32 · EP 32 · 1 replica"
std::string servingWorkloadLine(const Layout &l, const ServingSetup *setup)
{
    std::string line = modelName(l);
    if (!setup)
        return line;
    if (setup->disaggregated)
        return line + kDot + "prefill " + poolLine(setup->prefill) + "; decode "
               + poolLine(setup->decode);
    return line + kDot + poolLine(setup->decode);
}

// "input 1,024 · output 1,024 tokens · concurrency 64 · fp8, KV cache fp8 · sglang · MTP"
std::string servingLine(const Layout &l)
{
    const ServingConfig &c = *l.serving;
    std::string line = "input " + grouped(std::size_t(std::max(0, c.inputTokens))) + kDot
                       + "output " + grouped(std::size_t(std::max(0, c.outputTokens))) + " tokens";
    if (c.concurrency)
        line += kDot + std::string("concurrency ") + std::to_string(*c.concurrency);
    if (c.requestRate)
        line += kDot + formatNumber(*c.requestRate, 4) + " requests/s offered";
    line += kDot + std::string(toString(c.precision)) + ", KV cache " + toString(c.kvCache());
    if (!c.stack.empty())
        line += kDot + plain(c.stack);
    if (c.speculative)
        line += kDot + std::string(toString(c.speculative->method)) + " speculative decoding";
    if (c.phase != ServingPhase::Both)
        line += kDot + std::string(toString(c.phase)) + " phase only";
    return line;
}

std::string latencyBand(const ServingBand &b)
{
    return servingBandText(b) + ": " + formatSeconds(b.lowS) + " to " + formatSeconds(b.highS);
}

// A rate goes as 1 / TPOT: its band is TPOT's, inverted.
std::string rateText(const ServingEvaluation &e, double rate)
{
    std::string text = formatNumber(rate, 4);
    if (e.tpotBand.lowS > 0 && e.tpotS > 0)
        text += " (" + formatNumber(rate * e.tpotS / e.tpotBand.highS, 3) + " to "
                + formatNumber(rate * e.tpotS / e.tpotBand.lowS, 3) + ")";
    return text;
}

struct Metric
{
    const char *name;
    double (*value)(const ServingEvaluation &);
    std::string (*text)(const ServingEvaluation &);
};

const std::array<Metric, 8> &metrics()
{
    static const std::array<Metric, 8> list = {{
            {"TTFT",
             [](const ServingEvaluation &e) { return e.ttftS; },
             [](const ServingEvaluation &e) {
                 return formatSeconds(e.ttftS) + " (" + latencyBand(e.ttftBand) + ")";
             }},
            {"TPOT",
             [](const ServingEvaluation &e) { return e.tpotS; },
             [](const ServingEvaluation &e) {
                 return formatSeconds(e.tpotS) + " (" + latencyBand(e.tpotBand) + ")";
             }},
            {"Output tokens/s per GPU",
             [](const ServingEvaluation &e) { return e.outputTokensPerSPerGpu; },
             [](const ServingEvaluation &e) { return rateText(e, e.outputTokensPerSPerGpu); }},
            {"Tokens/s per user",
             [](const ServingEvaluation &e) { return e.tokensPerSPerUser; },
             [](const ServingEvaluation &e) { return rateText(e, e.tokensPerSPerUser); }},
            {"Output tokens/s",
             [](const ServingEvaluation &e) { return e.outputTokensPerS; },
             [](const ServingEvaluation &e) { return formatNumber(e.outputTokensPerS, 4); }},
            {"Requests/s",
             [](const ServingEvaluation &e) { return e.requestsPerS; },
             [](const ServingEvaluation &e) { return formatNumber(e.requestsPerS, 4); }},
            {"Memory per GPU",
             [](const ServingEvaluation &e) { return e.memory.totalGiB(); },
             [](const ServingEvaluation &e) {
                 return gib(e.memory.totalGiB()) + " of " + gib(e.memory.hbmGiB) + " HBM";
             }},
            {"Cost per million output tokens",
             [](const ServingEvaluation &e) { return e.costPerMillionOutputTokens; },
             [](const ServingEvaluation &e) {
                 return e.costPerMillionOutputTokens > 0
                                ? "$" + formatNumber(e.costPerMillionOutputTokens, 3)
                                : std::string("no price given");
             }},
    }};
    return list;
}

ReviewSection breakdownSection(const ServingEvaluation &e, const ServingEvaluation *a)
{
    ReviewSection s;
    s.heading = "Where a token's time goes";
    s.blocks.push_back(paragraph(
            "One decode step of the batch (" + formatNumber(e.decodeBatch, 4)
            + " requests per replica) and one request's prefill"
            + (e.disaggregated ? " with its KV cache's transfer to the decode pool" : "")
            + ". TTFT adds " + formatSeconds(e.ttftWaitS) + " of waiting."
            + (e.tpMethod.empty() ? "" : " TP all-reduces: " + plain(e.tpMethod) + ".")
            + (e.epMethod.empty() ? "" : " MoE dispatch and combine: " + plain(e.epMethod) + ".")));
    std::vector<std::vector<std::string>> rows;
    for (const auto &[name, member] : servingParts()) {
        if (e.decode.*member == 0 && e.prefill.*member == 0
            && (!a || (a->decode.*member == 0 && a->prefill.*member == 0)))
            continue;
        if (a)
            rows.push_back({name,
                            formatSeconds(a->decode.*member),
                            formatSeconds(e.decode.*member),
                            relativeChange(a->decode.*member, e.decode.*member)});
        else
            rows.push_back({name,
                            formatSeconds(e.decode.*member),
                            e.decode.sum() > 0
                                    ? formatNumber(100 * e.decode.*member / e.decode.sum(), 3) + "%"
                                    : std::string(),
                            formatSeconds(e.prefill.*member)});
    }
    if (a) {
        rows.push_back({"Decode step",
                        formatSeconds(a->decode.sum()),
                        formatSeconds(e.decode.sum()),
                        relativeChange(a->decode.sum(), e.decode.sum())});
        s.blocks.push_back(table({"Part", "A decode step", "B decode step", "Change"},
                                 {false, true, true, true},
                                 std::move(rows)));
    } else {
        rows.push_back(
                {"Total", formatSeconds(e.decode.sum()), "100%", formatSeconds(e.prefill.sum())});
        s.blocks.push_back(table({"Part", "Decode step", "Share", "Prefill"},
                                 {false, true, true, true},
                                 std::move(rows)));
    }
    return s;
}

ReviewSection timelineSection(const ServingEvaluation &e)
{
    ReviewSection s;
    s.heading = "Decode-step timeline";
    const StepTimeline &tl = e.decodeTimeline;
    s.blocks.push_back(figure(ReviewFigure::Timeline,
                              "One decode step of " + formatSeconds(tl.stepS)
                                      + ", one row per pipeline stage: the GEMMs, attention and "
                                        "the collectives each layer waits for, in order."));
    std::vector<std::vector<std::string>> rows;
    for (const Phase &p : tl.phases) {
        if (rows.size() >= 24)
            break;
        rows.push_back({plain(p.name),
                        toString(p.kind),
                        formatSeconds(p.start),
                        formatSeconds(p.duration())});
    }
    if (rows.empty()) {
        s.blocks.push_back(paragraph("The decode step has no timeline."));
        return s;
    }
    s.blocks.push_back(table({"Phase", "Kind", "Starts", "Lasts"},
                             {false, false, true, true},
                             std::move(rows),
                             tl.phases.size() > 24
                                     ? "The first 24 of " + grouped(tl.phases.size()) + " phases."
                                     : std::string()));
    return s;
}

ReviewSection memorySection(const ServingEvaluation &e)
{
    ReviewSection s;
    s.heading = "Memory per GPU";
    const auto row = [](const char *pool, const ServingMemoryUse &m) {
        return std::vector<std::string>{pool,
                                        formatNumber(m.weightsGiB, 3),
                                        formatNumber(m.kvCacheGiB, 3),
                                        formatNumber(m.activationsGiB, 3),
                                        formatNumber(m.totalGiB(), 3),
                                        formatNumber(m.kvPoolGiB, 3),
                                        formatNumber(m.hbmGiB, 3)};
    };
    std::vector<std::vector<std::string>> rows{
            row(e.disaggregated ? "Decode pool" : "Every GPU", e.memory)};
    if (e.disaggregated)
        rows.push_back(row("Prefill pool", e.prefillMemory));
    s.blocks.push_back(paragraph("The KV cache holds " + std::to_string(e.maxConcurrency)
                                 + " requests per replica; " + formatNumber(e.concurrency, 4)
                                 + " are in flight."));
    s.blocks.push_back(table(
            {"GPUs", "Weights", "KV cache", "Activations", "Total", "KV pool", "HBM"},
            {false, true, true, true, true, true, true},
            std::move(rows),
            "GiB per GPU of the most loaded stage; the KV pool is what the stack sets aside."));
    return s;
}

ReviewSection poolsSection(const ServingSetup &setup)
{
    ReviewSection s;
    s.heading = "Pools";
    const auto row = [](const char *name, const ServingPoolShape &p) {
        return std::vector<std::string>{name,
                                        std::to_string(p.gpus()),
                                        std::to_string(p.tp),
                                        std::to_string(p.ep),
                                        std::to_string(p.pp),
                                        std::to_string(p.replicas),
                                        std::to_string(p.attentionDp)};
    };
    s.blocks.push_back(table({"Pool", "GPUs", "TP", "EP", "PP", "Replicas", "Attention DP"},
                             {false, true, true, true, true, true, true},
                             {row("Prefill", setup.prefill), row("Decode", setup.decode)}));
    return s;
}

ReviewSection linksSection(const ServingEvaluation &e, const Topology &t, std::size_t count)
{
    ReviewSection s;
    s.heading = "Hottest links";
    if (!e.links) {
        s.blocks.push_back(paragraph("The link loads were not computed."));
        return s;
    }
    const ServingLinks &l = *e.links;
    const LinkLoads &d = l.decodeStep;
    s.blocks.push_back(paragraph(grouped(d.size()) + " links, " + grouped(d.loaded)
                                 + " with traffic in a decode step. Utilization is the busiest "
                                   "direction's bytes per second in steady state (decode "
                                   "steps and prefills) over the link's rate; peak is its "
                                   "share of the busiest phase."));
    std::vector<std::vector<std::string>> rows;
    for (int id : busiestServingLinks(l, count)) {
        const std::size_t i = static_cast<std::size_t>(id);
        rows.push_back({plain(t.linkName(id)),
                        toString(t.links()[i].kind),
                        bytesText(double(d.bytesUp[i]) + double(d.bytesDown[i])),
                        bytesText(l.requestBytes[i]),
                        percent(d.utilization[i]),
                        percent(d.peakUtilization[i])});
    }
    if (!rows.empty())
        s.blocks.push_back(
                table({"Link", "Kind", "Bytes/decode step", "Bytes/request", "Utilization", "Peak"},
                      {false, false, true, true, true, true},
                      std::move(rows)));
    std::vector<std::vector<std::string>> tiers;
    for (const ServingTierSummary &x : summarizeServingLinks(t, l))
        tiers.push_back({x.decodeStep.tier.name(),
                         toString(x.decodeStep.tier.kind),
                         grouped(x.decodeStep.loaded),
                         bytesText(x.decodeStep.bytesPerStep),
                         bytesText(x.bytesPerRequest),
                         percent(x.decodeStep.maxUtilization)});
    s.blocks.push_back(table({"Tier", "Kind", "Loaded", "Bytes/decode step", "Bytes/request", "Max"},
                             {false, false, true, true, true, true},
                             std::move(tiers),
                             "Every tier of the cluster."));
    return s;
}

ReviewSection comparisonSection(const ServingReviewInput &in, const ServingEvaluation &a)
{
    const ServingEvaluation &b = *in.evaluation;
    ReviewSection s;
    s.heading = "A/B comparison";
    const std::string aName = in.pinnedSource.empty() ? "the pinned state" : plain(in.pinnedSource);
    s.blocks.push_back(paragraph("A is " + aName + "; B is this layout. TPOT "
                                 + relativeChange(a.tpotS, b.tpotS) + ", output tokens/s per GPU "
                                 + relativeChange(a.outputTokensPerSPerGpu, b.outputTokensPerSPerGpu)
                                 + " from A to B."));
    std::vector<std::vector<std::string>> rows;
    for (const Metric &m : metrics())
        rows.push_back({m.name, m.text(a), m.text(b), relativeChange(m.value(a), m.value(b))});
    s.blocks.push_back(
            table({"Quantity", "A", "B", "Change"}, {false, true, true, true}, std::move(rows)));
    return s;
}

ReviewSection assumptionsSection(const ServingEvaluation &e)
{
    ReviewSection s;
    s.heading = "Assumptions and where the model is unsure";
    if (!e.bandBasis.empty())
        s.blocks.push_back(paragraph("TPOT is " + formatSeconds(e.tpotS) + ", "
                                     + latencyBand(e.tpotBand) + "; TTFT " + formatSeconds(e.ttftS)
                                     + ", " + latencyBand(e.ttftBand)
                                     + ". The bands: " + plain(e.bandBasis)));
    std::vector<std::string> items;
    for (const std::string &a : e.assumptions)
        if (e.bandBasis.empty() || a.find(e.bandBasis) == std::string::npos)
            items.push_back(plain(a));
    if (!items.empty())
        s.blocks.push_back(bullets(std::move(items)));
    return s;
}

} // namespace

ReviewReport makeServingReviewReport(const ServingReviewInput &in)
{
    if (!in.layout || !in.topology || !in.evaluation || !in.layout->serving)
        throw std::invalid_argument("makeServingReviewReport: no serving layout or evaluation");
    const ServingEvaluation &e = *in.evaluation;
    if (!e.ok)
        throw std::invalid_argument("the serving workload cannot be priced: " + e.error);
    const ServingEvaluation *a = in.pinned && in.pinned->ok && in.pinnedLayout ? in.pinned
                                                                               : nullptr;
    ServingSetup setup;
    const bool resolved = resolveServing(*in.layout, in.topology->gpuCount(), setup).empty();

    ReviewReport r;
    r.title = plain(shownTitle(in.title));
    r.date = plain(in.date);
    r.source = plain(in.source);
    r.cluster = clusterLine(*in.topology);
    r.workload = servingWorkloadLine(*in.layout, resolved ? &setup : nullptr);
    r.trainingLabel = "Serving";
    r.training = servingLine(*in.layout);
    r.stepTimeLabel = "TPOT";
    r.stepTime = formatSeconds(e.tpotS);
    r.stepBand = latencyBand(e.tpotBand);
    if (a)
        r.comparedWith = "Compared with A, "
                         + (in.pinnedSource.empty() ? std::string("the pinned state")
                                                    : plain(in.pinnedSource))
                         + ": TPOT " + formatSeconds(a->tpotS) + ", "
                         + relativeChange(a->tpotS, e.tpotS) + " in B.";
    r.summary.columns = {"Quantity", "Value"};
    r.summary.numeric = {false, true};
    for (const Metric &m : metrics())
        r.summary.rows.push_back({m.name, m.text(e)});
    r.summary.rows.push_back({"Concurrency per replica",
                              formatNumber(e.concurrency, 4) + " (the KV cache holds "
                                      + std::to_string(e.maxConcurrency) + ")"});

    ReviewSection diagram;
    diagram.heading = "The cluster";
    diagram.blocks.push_back(
            figure(ReviewFigure::Diagram,
                   r.cluster + ". " + r.workload + ". GPUs are coloured by "
                           + (e.disaggregated ? "pool (prefill or decode)" : "TP group")
                           + "; links by what a decode step puts on them, as the legend says."));
    r.sections.push_back(std::move(diagram));
    r.sections.push_back(breakdownSection(e, a));
    r.sections.push_back(timelineSection(e));
    r.sections.push_back(memorySection(e));
    if (resolved && setup.disaggregated)
        r.sections.push_back(poolsSection(setup));
    r.sections.push_back(linksSection(e, *in.topology, in.busiestLinks));
    r.sections.push_back(warningsSection(e.warnings, e.tpotS, "of TPOT", "Cost"));
    if (a)
        r.sections.push_back(comparisonSection(in, *a));
    r.sections.push_back(assumptionsSection(e));
    return r;
}

} // namespace railyard::engine
