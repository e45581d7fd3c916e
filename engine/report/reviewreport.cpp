#include "report/reviewreport.h"

#include "base/safetext.h"
#include "base/showntext.h"
#include "base/units.h"
#include "layout/transformer.h"
#include "report/report.h"
#include "report/reportformat.h"
#include "report/reviewblocks.h"
#include "step/evaluationdiff.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <ostream>
#include <stdexcept>

// The design-review report: what it says. Its Markdown is written by reviewmarkdown.cpp, its PDF
// drawn by the widgets (widgets/export/reviewpdf.cpp).

namespace railyard::engine {

using namespace reportformat;
using namespace reviewblocks;

namespace reviewblocks {

std::string plain(const std::string &text)
{
    return plainText(text);
}

// "2,048 servers of 8 × H100-SXM · 16,384 GPUs · 512 leaves, 32 spines"
std::string clusterLine(const Topology &t)
{
    const ClusterShape &s = t.shape();
    const bool one = s.nodes == 1;
    const std::string unit = s.nodesPerDomain > 1 ? (one ? "tray" : "trays")
                                                  : (one ? "server" : "servers");
    std::string line = grouped(std::size_t(s.nodes)) + " " + unit + " of "
                       + std::to_string(s.gpusPerNode) + " \u00d7 " + plain(t.gpuSpec().id) + kDot
                       + grouped(std::size_t(t.gpuCount())) + " GPUs";
    if (s.domainSize > s.gpusPerNode)
        line += kDot + std::string("NVLink domains of ") + std::to_string(s.domainSize);
    if (s.hasFabric) {
        line += kDot + std::to_string(s.leaves) + (s.leaves == 1 ? " leaf" : " leaves");
        if (s.spines > 0)
            line += ", " + std::to_string(s.spines) + (s.spines == 1 ? " spine" : " spines");
        if (s.cores > 0)
            line += ", " + std::to_string(s.cores) + (s.cores == 1 ? " core" : " cores");
    }
    return line;
}

std::string modelName(const Layout &l)
{
    if (!l.model)
        return "no model";
    if (!l.model->preset.empty())
        return plain(l.model->preset);
    const ResolvedModel m = resolveModel(*l.model);
    if (!m.error.empty())
        return "custom model";
    return "custom model (" + std::to_string(m.dims.layers) + " layers, hidden "
           + grouped(std::size_t(m.dims.hidden)) + ")";
}

std::string gib(double v)
{
    return formatNumber(v, 3) + " GiB";
}

// "+12.3%", "-4%", "same"
std::string relativeChange(double a, double b)
{
    if (!(a > 0) || !std::isfinite(a) || !std::isfinite(b))
        return "";
    const double rel = (b - a) / a;
    if (std::fabs(rel) < 0.0005)
        return "same";
    return (rel > 0 ? "+" : "") + formatNumber(100 * rel, std::fabs(rel) < 0.1 ? 2 : 3) + "%";
}

ReviewBlock paragraph(std::string text)
{
    ReviewBlock b;
    b.kind = ReviewBlock::Kind::Paragraph;
    b.text = std::move(text);
    return b;
}

ReviewBlock figure(ReviewFigure f, std::string caption)
{
    ReviewBlock b;
    b.kind = ReviewBlock::Kind::Figure;
    b.figure = f;
    b.text = std::move(caption);
    return b;
}

ReviewBlock table(std::vector<std::string> columns,
                  std::vector<bool> numeric,
                  std::vector<std::vector<std::string>> rows,
                  std::string caption)
{
    ReviewBlock b;
    b.kind = ReviewBlock::Kind::Table;
    b.table.columns = std::move(columns);
    b.table.numeric = std::move(numeric);
    b.table.rows = std::move(rows);
    b.text = std::move(caption);
    return b;
}

ReviewBlock bullets(std::vector<std::string> items)
{
    ReviewBlock b;
    b.kind = ReviewBlock::Kind::Bullets;
    b.items = std::move(items);
    return b;
}

ReviewSection warningsSection(const std::vector<Warning> &warnings,
                              double wholeS,
                              const char *share,
                              const char *costColumn)
{
    ReviewSection s;
    s.heading = "Warnings";
    if (warnings.empty()) {
        s.blocks.push_back(paragraph("No placement or configuration warnings."));
        return s;
    }
    std::vector<std::vector<std::string>> rows;
    for (const Warning &w : warnings) {
        std::string cost = "not priced";
        if (w.costS > 0)
            cost = "+" + formatSeconds(w.costS)
                   + (wholeS > 0
                              ? " (" + formatNumber(100 * w.costS / wholeS, 2) + "% " + share + ")"
                              : std::string());
        rows.push_back({severityName(w.severity), plain(w.message), cost});
    }
    s.blocks.push_back(
            table({"Severity", "Warning", costColumn}, {false, false, true}, std::move(rows)));
    return s;
}

} // namespace reviewblocks

namespace {

// "llama3.1-405b · TP 8 · PP 16 (VP 4) · DP 128"
std::string workloadLine(const Layout &l)
{
    const ParallelConfig &p = l.parallel;
    std::string line = modelName(l) + kDot + "TP " + std::to_string(p.tp);
    if (p.cp > 1)
        line += kDot + std::string("CP ") + std::to_string(p.cp);
    if (p.ep > 1)
        line += kDot + std::string("EP ") + std::to_string(p.ep);
    line += kDot + std::string("PP ") + std::to_string(p.pp);
    if (p.vp > 1)
        line += " (VP " + std::to_string(p.vp) + ")";
    line += kDot + std::string("DP ") + std::to_string(l.dataParallel());
    if (!l.mapping.empty())
        line += kDot + std::string("placed by hand");
    return line;
}

// "sequence 8,192 · global batch 2,048 · micro-batch 1 · bf16 · selective recompute · ZeRO-1"
std::string trainingLine(const Layout &l)
{
    const TrainingConfig &t = l.training;
    std::string line = "sequence " + grouped(std::size_t(std::max(0, t.seqLen))) + kDot
                       + "global batch " + grouped(std::size_t(std::max(0, t.globalBatch))) + kDot
                       + "micro-batch " + std::to_string(t.microBatch) + kDot
                       + toString(t.precision) + kDot
                       + (t.recompute == Recompute::None        ? "no recomputation"
                          : t.recompute == Recompute::Selective ? "selective recomputation"
                                                                : "full recomputation");
    // The modules where they are not Megatron's default (core_attn): "(layernorm+moe)".
    if (const std::string modules = nonDefaultRecomputeModules(t); !modules.empty())
        line += " (" + modules + ")";
    if (t.optimizer.fsdp)
        line += kDot + std::string("FSDP");
    else if (t.optimizer.zeroStage > 0)
        line += kDot + std::string("ZeRO-") + std::to_string(t.optimizer.zeroStage);
    if (!t.stack.empty())
        line += kDot + plain(t.stack);
    return line;
}

std::string bandText(const StepTimeBand &b)
{
    return "\u00b1" + formatNumber(100 * b.fraction, 2) + "%: " + formatSeconds(b.lowS) + " to "
           + formatSeconds(b.highS);
}

std::string tokensText(double tokensPerS)
{
    return grouped(static_cast<std::size_t>(std::llround(std::max(0.0, tokensPerS))));
}

struct Metric
{
    const char *name;
    double (*value)(const Evaluation &);
    std::string (*text)(const Evaluation &);
};

const std::array<Metric, 7> &metrics()
{
    static const std::array<Metric, 7> list = {{
            {"Step time",
             [](const Evaluation &e) { return e.stepTimeS; },
             [](const Evaluation &e) { return formatSeconds(e.stepTimeS); }},
            {"Step-time band",
             [](const Evaluation &e) { return e.stepTimeBand.fraction; },
             [](const Evaluation &e) { return bandText(e.stepTimeBand); }},
            {"Tokens/s",
             [](const Evaluation &e) { return e.tokensPerS; },
             [](const Evaluation &e) { return tokensText(e.tokensPerS); }},
            {"Tokens/s per GPU",
             [](const Evaluation &e) { return e.tokensPerSPerGpu; },
             [](const Evaluation &e) { return formatNumber(e.tokensPerSPerGpu, 4); }},
            {"MFU",
             [](const Evaluation &e) { return e.mfu; },
             [](const Evaluation &e) {
                 return formatNumber(100 * e.mfu, 3) + "% (" + formatNumber(e.modelTflopsPerGpu, 4)
                        + " model TFLOP/s per GPU" + mfuFp8Note(e) + ")";
             }},
            {"Memory per GPU",
             [](const Evaluation &e) { return e.memory.totalGiB(); },
             [](const Evaluation &e) {
                 return gib(e.memory.totalGiB()) + " of " + gib(e.hbmGiB) + " HBM";
             }},
            {"Cost per million tokens",
             [](const Evaluation &e) { return e.costPerMillionTokens; },
             [](const Evaluation &e) {
                 return e.costPerStep > 0 ? "$" + formatNumber(e.costPerMillionTokens, 3) + " ($"
                                                    + formatNumber(e.costPerStep, 4) + " per step)"
                                          : std::string("no price given");
             }},
    }};
    return list;
}

const std::pair<const char *, double StepBreakdown::*> kParts[] = {
        {"Compute", &StepBreakdown::compute},
        {"TP", &StepBreakdown::tp},
        {"CP", &StepBreakdown::cp},
        {"EP", &StepBreakdown::ep},
        {"PP bubble", &StepBreakdown::ppBubble},
        {"PP send/recv", &StepBreakdown::ppP2p},
        {"DP", &StepBreakdown::dp},
        {"Optimizer", &StepBreakdown::optimizer},
};

ReviewSection breakdownSection(const Evaluation &e, const Evaluation *a)
{
    ReviewSection s;
    s.heading = "Where the step goes";
    s.blocks.push_back(figure(ReviewFigure::StepBreakdown,
                              "Exposed seconds of the step by part (solid; they add up to the step "
                              "time) and the time hidden behind compute (hatched)."));
    std::vector<std::vector<std::string>> rows;
    for (const auto &[name, member] : kParts) {
        if (e.total.*member == 0 && e.exposed.*member == 0 && (!a || a->total.*member == 0))
            continue;
        if (a)
            rows.push_back({name,
                            formatSeconds(a->exposed.*member),
                            formatSeconds(e.exposed.*member),
                            relativeChange(a->exposed.*member, e.exposed.*member)});
        else
            rows.push_back({name,
                            formatSeconds(e.exposed.*member),
                            formatSeconds(e.total.*member),
                            e.stepTimeS > 0
                                    ? formatNumber(100 * e.exposed.*member / e.stepTimeS, 3) + "%"
                                    : std::string()});
    }
    if (a) {
        rows.push_back({"Step",
                        formatSeconds(a->stepTimeS),
                        formatSeconds(e.stepTimeS),
                        relativeChange(a->stepTimeS, e.stepTimeS)});
        s.blocks.push_back(table({"Part", "A exposed", "B exposed", "Change"},
                                 {false, true, true, true},
                                 std::move(rows)));
    } else {
        rows.push_back({"Step", formatSeconds(e.stepTimeS), "", "100%"});
        s.blocks.push_back(table({"Part", "Exposed", "On its own", "Share of the step"},
                                 {false, true, true, true},
                                 std::move(rows)));
    }
    return s;
}

ReviewSection timelineSection(const Evaluation &e)
{
    ReviewSection s;
    s.heading = "Step timeline";
    const StepTimeline &tl = e.timeline;
    const int stages = std::max(1, tl.stages);
    s.blocks.push_back(figure(
            ReviewFigure::Timeline,
            "One step, " + std::string(stages > 1 ? "one row per pipeline stage" : "one row")
                    + ": the critical path (compute, bubble, exposed communication, optimizer) "
                      "on top, communication running beside compute in the lanes under it."));
    // Per kind of phase: how many, and the seconds per stage on and beside the critical path.
    struct Sum
    {
        std::size_t phases = 0;
        double exposed = 0, beside = 0;
    };
    std::array<Sum, kPhaseKinds> sums{};
    for (const Phase &p : tl.phases) {
        Sum &x = sums[static_cast<std::size_t>(p.kind)];
        ++x.phases;
        (p.exposed ? x.exposed : x.beside) += p.duration();
    }
    static const char *const names[kPhaseKinds]
            = {"Compute", "TP", "CP", "EP", "PP send/recv", "DP", "Optimizer", "PP bubble"};
    std::vector<std::vector<std::string>> rows;
    for (int k = 0; k < kPhaseKinds; ++k) {
        const Sum &x = sums[static_cast<std::size_t>(k)];
        if (x.phases == 0)
            continue;
        rows.push_back({names[k],
                        grouped(x.phases),
                        formatSeconds(x.exposed / stages),
                        formatSeconds(x.beside / stages)});
    }
    if (rows.empty()) {
        s.blocks.push_back(paragraph("The step has no timeline."));
        return s;
    }
    s.blocks.push_back(paragraph(
            grouped(tl.phases.size()) + " phases on " + std::to_string(stages)
            + (stages == 1 ? " stage" : " pipeline stages") + " in " + formatSeconds(tl.stepS)
            + ". A micro-batch's forward or backward phase on the critical path lasts as long as "
              "its compute and the TP, CP and EP communication it waits for (the breakdown above "
              "counts that apart); the lanes show when that communication runs."));
    s.blocks.push_back(table({"Phase", "Phases", "Critical path per stage", "In the lanes"},
                             {false, true, true, true},
                             std::move(rows)));
    return s;
}

ReviewSection memorySection(const Evaluation &e)
{
    ReviewSection s;
    s.heading = "Memory per GPU";
    s.blocks.push_back(figure(ReviewFigure::Memory,
                              "GiB per GPU by pipeline stage against " + gib(e.hbmGiB)
                                      + " of HBM (dashed); red is what does not fit."));
    s.blocks.push_back(table({"Stages", "GiB per GPU", "Of HBM"},
                             {false, true, true},
                             memoryStageRows(e.memoryGiBPerStage, e.hbmGiB)));
    const MemoryBreakdown &m = e.memory;
    s.blocks.push_back(table({"Most loaded stage", "GiB per GPU"},
                             {false, true},
                             {{"Weights", formatNumber(m.weightsGiB, 3)},
                              {"Gradients", formatNumber(m.gradientsGiB, 3)},
                              {"Optimizer", formatNumber(m.optimizerGiB, 3)},
                              {"Activations", formatNumber(m.activationsGiB, 3)},
                              {"Other", formatNumber(m.otherGiB, 3)},
                              {"Total", formatNumber(m.totalGiB(), 3)}}));
    return s;
}

ReviewSection linksSection(const Evaluation &e, const Topology &t, std::size_t count)
{
    ReviewSection s;
    s.heading = "Hottest links";
    if (!e.links) {
        s.blocks.push_back(paragraph("The link loads were not computed."));
        return s;
    }
    const LinkLoads &loads = *e.links;
    const std::vector<int> ids = busiestLinks(loads, count);
    s.blocks.push_back(paragraph(grouped(loads.size()) + " links, " + grouped(loads.loaded)
                                 + " with traffic. Utilization is the busiest direction's bytes "
                                   "per step over the link's rate times the step time; peak is "
                                   "its share of the busiest phase it carries."));
    std::vector<std::vector<std::string>> rows;
    for (int id : ids) {
        const std::size_t i = static_cast<std::size_t>(id);
        rows.push_back({plain(t.linkName(id)),
                        toString(t.links()[i].kind),
                        bytesText(double(loads.bytesUp[i]) + double(loads.bytesDown[i])),
                        percent(loads.utilization[i]),
                        percent(loads.peakUtilization[i])});
    }
    if (!rows.empty())
        s.blocks.push_back(table({"Link", "Kind", "Bytes/step", "Utilization", "Peak"},
                                 {false, false, true, true, true},
                                 std::move(rows),
                                 "The " + std::to_string(ids.size()) + " busiest of "
                                         + grouped(loads.loaded) + " links with traffic."));
    std::vector<std::vector<std::string>> tiers;
    for (const LinkTierSummary &tier : summarizeLinks(t, loads))
        tiers.push_back({tier.tier.name(),
                         toString(tier.tier.kind),
                         grouped(tier.links),
                         grouped(tier.loaded),
                         bytesText(tier.bytesPerStep),
                         percent(tier.meanUtilization),
                         percent(tier.maxUtilization)});
    s.blocks.push_back(table({"Tier", "Kind", "Links", "Loaded", "Bytes/step", "Mean", "Max"},
                             {false, false, true, true, true, true, true},
                             std::move(tiers),
                             "Every tier of the cluster."));
    return s;
}

ReviewSection comparisonSection(const ReviewInput &in)
{
    const Evaluation &a = *in.pinned, &b = *in.evaluation;
    ReviewSection s;
    s.heading = "A/B comparison";
    const std::string aName = in.pinnedSource.empty() ? "the pinned state" : plain(in.pinnedSource);
    s.blocks.push_back(paragraph(
            "A is " + aName + " (" + workloadLine(*in.pinnedLayout) + "); B is this layout. "
            + describeChange(a.stepTimeS, b.stepTimeS, "step time") + " from A to B."));
    std::vector<std::vector<std::string>> rows;
    for (const Metric &m : metrics())
        rows.push_back({m.name, m.text(a), m.text(b), relativeChange(m.value(a), m.value(b))});
    s.blocks.push_back(
            table({"Quantity", "A", "B", "Change"}, {false, true, true, true}, std::move(rows)));
    const std::vector<LinkChange> changes = mostChangedLinks(a, b, in.changedLinks);
    if (changes.empty()) {
        s.blocks.push_back(paragraph(in.pinnedLayout->cluster == in.layout->cluster
                                             ? "No link's load changed."
                                             : "A is another cluster: its links cannot be "
                                               "compared one by one."));
    } else {
        std::vector<std::vector<std::string>> links;
        for (const LinkChange &c : changes)
            links.push_back({plain(in.topology->linkName(c.link)),
                             percent(c.utilizationA),
                             percent(c.utilizationB),
                             bytesText(c.bytesA),
                             bytesText(c.bytesB)});
        s.blocks.push_back(table({"Link", "A utilization", "B utilization", "A bytes", "B bytes"},
                                 {false, true, true, true, true},
                                 std::move(links),
                                 "The links whose load changed most."));
    }
    return s;
}

ReviewSection assumptionsSection(const Evaluation &e)
{
    ReviewSection s;
    s.heading = "Assumptions and where the model is unsure";
    if (!e.stepTimeBand.basis.empty())
        s.blocks.push_back(paragraph("The step time is " + formatSeconds(e.stepTimeS) + ", "
                                     + bandText(e.stepTimeBand)
                                     + ". The band: " + plain(e.stepTimeBand.basis)));
    if (!e.flopConvention.empty())
        s.blocks.push_back(paragraph("MFU counts " + plain(e.flopConvention)));
    std::vector<std::string> items;
    for (const std::string &a : e.assumptions)
        if (e.stepTimeBand.basis.empty() || a.find(e.stepTimeBand.basis) == std::string::npos)
            items.push_back(plain(a));
    if (!items.empty())
        s.blocks.push_back(bullets(std::move(items)));
    return s;
}

} // namespace

std::vector<std::vector<std::string>> memoryStageRows(const std::vector<double> &gib, double hbm)
{
    std::vector<std::vector<std::string>> rows;
    std::size_t i = 0;
    while (i < gib.size()) {
        const std::string shown = formatNumber(gib[i], 3);
        std::size_t j = i + 1;
        while (j < gib.size() && formatNumber(gib[j], 3) == shown)
            ++j;
        const std::string stages = j - i == 1 ? std::to_string(i)
                                              : std::to_string(i) + "-" + std::to_string(j - 1);
        rows.push_back({stages,
                        shown,
                        hbm > 0 ? formatNumber(100 * gib[i] / hbm, 3) + "%" : std::string()});
        i = j;
    }
    return rows;
}

ReviewReport makeReviewReport(const ReviewInput &in)
{
    if (!in.layout || !in.topology || !in.evaluation)
        throw std::invalid_argument("makeReviewReport: no layout, topology or evaluation");
    const Evaluation &e = *in.evaluation;
    if (!e.ok)
        throw std::invalid_argument("the step cannot be priced: " + e.error);
    const Evaluation *a = in.pinned && in.pinned->ok && in.pinnedLayout ? in.pinned : nullptr;

    ReviewReport r;
    r.title = plain(shownTitle(in.title));
    r.date = plain(in.date);
    r.source = plain(in.source);
    r.cluster = clusterLine(*in.topology);
    r.workload = workloadLine(*in.layout);
    r.training = trainingLine(*in.layout);
    r.stepTime = formatSeconds(e.stepTimeS);
    r.stepBand = bandText(e.stepTimeBand);
    if (a)
        r.comparedWith = "Compared with A, "
                         + (in.pinnedSource.empty() ? std::string("the pinned state")
                                                    : plain(in.pinnedSource))
                         + ": step " + formatSeconds(a->stepTimeS) + ", "
                         + describeChange(a->stepTimeS, e.stepTimeS, "step time") + " in B.";
    r.summary.columns = {"Quantity", "Value"};
    r.summary.numeric = {false, true};
    for (const Metric &m : metrics())
        r.summary.rows.push_back({m.name, m.text(e)});
    r.summary.rows.push_back(
            {"Tokens per step", grouped(std::size_t(std::llround(e.tokensPerStep)))});

    ReviewSection diagram;
    diagram.heading = "The cluster";
    diagram.blocks.push_back(figure(ReviewFigure::Diagram,
                                    r.cluster + ". " + r.workload
                                            + ". GPUs are coloured by their group; links by "
                                              "what they carry, as the legend says."));
    r.sections.push_back(std::move(diagram));
    r.sections.push_back(breakdownSection(e, a));
    r.sections.push_back(timelineSection(e));
    r.sections.push_back(memorySection(e));
    r.sections.push_back(linksSection(e, *in.topology, in.busiestLinks));
    r.sections.push_back(warningsSection(e.warnings, e.stepTimeS, "of the step", "Cost per step"));
    if (a)
        r.sections.push_back(comparisonSection(in));
    r.sections.push_back(assumptionsSection(e));
    return r;
}

} // namespace railyard::engine
