// `railyard evaluate FILE`: the layout's training step or serving priced, as text or JSON, with
// its busiest links, timeline and faults, or the faults ranked by what they cost (--what-if).
#include "cli.h"
#include "cli_p.h"

#include "base/inputerror.h"
#include "base/jsoncursor.h"
#include "faults/faultimpact.h"
#include "faults/faultreport.h"
#include "faults/faultsweep.h"
#include "layout/layout.h"
#include "report/report.h"
#include "report/servingreport.h"
#include "serving/servingevaluate.h"
#include "step/evaluate.h"
#include "topology/topology.h"

#include <algorithm>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace railyard::cli::detail {

using namespace railyard::engine;

namespace {

const char *kEvaluateHelp
        = "usage: railyard evaluate FILE [--json] [--links busiest|all] [--top-links N] "
          "[--no-links] [--timeline]\n"
          "       railyard evaluate FILE --what-if leaves|spines|nics|links|gpus [--top N] "
          "[--threads N] [--json]\n"
          "\n"
          "Prices one training step of the layout FILE's workload on its cluster (or, for a "
          "serving\n"
          "layout, its decode step and prefill: see below): step time and "
          "its\n"
          "breakdown (exposed seconds), tokens/s, MFU, memory per GPU, cost, the load on the "
          "links\n"
          "(a summary per tier: NVLink, PCIe, NIC-leaf, leaf-spine, ...) and warnings. With "
          "cluster.faults,\n"
          "also what they cost against the healthy cluster and what recovers most of it. A layout "
          "with\n"
          "\"serving\" is priced as inference: TTFT, TPOT, output tokens/s per GPU and per user,\n"
          "memory and the concurrency the KV cache holds, bytes per decode step and per request.\n"
          "  --json          print one JSON object (the keys of DESIGN.md's command-line "
          "contract)\n"
          "  --links WHICH   busiest (default): the per-tier summary and the busiest links;\n"
          "                  all: the summary and every link, idle ones too (streamed)\n"
          "  --top-links N   how many busiest links to list (default 20)\n"
          "  --no-links      skip per-link loads (no summary, no links)\n"
          "  --timeline      with --json: add the step's timeline, phase by phase per pipeline "
          "stage,\n"
          "                  with the bytes each phase puts on its busiest links (--top-links "
          "N per\n"
          "                  phase, and how many links and bytes were left out); with --links "
          "all\n"
          "                  on every link (streamed)\n"
          "  --what-if KIND  fail every element of KIND in turn (leaves, spines, nics, links: the\n"
          "                  network's, gpus: each GPU out), on top of the layout's own faults,\n"
          "                  and rank them by what they cost the job\n"
          "  --top N         with --what-if: how many to list (default 10)\n"
          "  --threads N     with --what-if: worker threads (default: one per hardware thread)\n";

int evaluateFile(const Options &o, const std::string &file, std::ostream &out)
{
    ReportOptions report;
    if (const auto n = o.value("top-links")) {
        long count = -1;
        try {
            std::size_t used = 0;
            count = std::stol(*n, &used);
            if (used != n->size() || count < 0)
                throw std::invalid_argument("");
        } catch (...) {
            throw UsageError("--top-links needs a whole number >= 0, got '" + echo(*n) + "'");
        }
        report.busiest = static_cast<std::size_t>(count);
    }
    const std::string which = o.value("links").value_or("busiest");
    if (which == "all")
        report.links = LinkListing::All;
    else if (which != "busiest")
        throw UsageError("--links takes busiest or all, got '" + echo(which) + "'");
    if (report.links == LinkListing::All && o.value("top-links"))
        throw UsageError("--top-links lists the busiest links; --links all lists every link");
    if (o.flag("no-links")) {
        if (o.value("links") || o.value("top-links"))
            throw UsageError("--no-links leaves no links to list");
        report.links = LinkListing::None;
    }

    report.timeline = o.flag("timeline");
    if (report.timeline && !o.flag("json"))
        throw UsageError("--timeline is part of the JSON report: add --json");
    const auto whole = [&](const char *name, long min, long fallback) {
        const auto v = o.value(name);
        if (!v)
            return fallback;
        long n = -1;
        try {
            std::size_t used = 0;
            n = std::stol(*v, &used);
            if (used != v->size() || n < min)
                throw std::invalid_argument("");
        } catch (...) {
            throw UsageError(std::string("--") + name + " needs a whole number >= "
                             + std::to_string(min) + ", got '" + echo(*v) + "'");
        }
        return n;
    };
    if (const auto what = o.value("what-if")) {
        const auto kind = sweepKindFromString(*what);
        if (!kind)
            throw UsageError("--what-if takes leaves, spines, nics, links or gpus, got '"
                             + echo(*what) + "'");
        for (const char *other : {"links", "top-links"})
            if (o.value(other))
                throw UsageError(std::string("--") + other
                                 + " lists a step's links; --what-if "
                                   "ranks failures");
        if (report.timeline || o.flag("no-links"))
            throw UsageError("--what-if ranks failures: it takes --top, --threads and --json");
        const std::size_t top = static_cast<std::size_t>(whole("top", 0, 10));
        SweepOptions sweep;
        sweep.threads = static_cast<int>(std::min(whole("threads", 1, 0), 1024L));
        const Layout layout = readLayoutFile(file);
        const Topology healthy = topologyOf(withoutFaults(layout).cluster, file);
        SweepResult r;
        try {
            r = sweepFaults(layout, healthy, *kind, sweep);
        } catch (const InputError &e) {
            throw InputError(file, e.where(), e.message());
        }
        if (!r.ok)
            throw InputError(file,
                             "",
                             std::string(layout.isServing() ? "cannot price this serving workload: "
                                                            : "cannot price this step: ")
                                     + r.error);
        if (o.flag("json"))
            out << jsonDocument(sweepJson(r, top));
        else
            writeSweepText(out, r, top);
        return 0;
    }
    for (const char *sweepOnly : {"top", "threads"})
        if (o.value(sweepOnly))
            throw UsageError(std::string("--") + sweepOnly + " goes with --what-if");

    const Layout layout = readLayoutFile(file);
    // With faults: the healthy cluster too, to say what they cost.
    std::optional<Topology> healthy;
    if (!layout.cluster.faults.empty())
        healthy = topologyOf(withoutFaults(layout).cluster, file);
    const Topology topology = healthy ? topologyWithFaults(*healthy, layout.cluster.faults, file)
                                      : topologyOf(layout.cluster, file);
    report.title = layout.title.empty() ? file : layout.title;
    if (layout.isServing()) {
        ServingOptions options;
        options.linkLoads = report.links != LinkListing::None;
        options.timeline = report.timeline;
        EvaluationWorkspace workspace;
        const ServingEvaluation e = evaluateServing(layout, topology, workspace, options);
        if (!e.ok)
            throw InputError(file, "", "cannot price this serving workload: " + e.error);
        workspace = EvaluationWorkspace();
        std::optional<FaultImpact> impact;
        if (healthy) {
            ImpactOptions io;
            io.links = std::max<std::size_t>(report.busiest, 10);
            impact = analyzeFaults(layout, *healthy, topology, io);
        }
        if (o.flag("json")) {
            std::ostringstream json;
            writeServingJson(json, e, topology, report);
            if (!impact) {
                out << json.str();
            } else {
                // The serving report with the faults' impact after it (as training's `faults`).
                Json j = Json::parse(json.str());
                j["faults"] = faultImpactJson(*impact, topology);
                out << jsonDocument(j);
            }
        } else {
            writeServingText(out, e, topology, report);
            if (impact)
                writeFaultImpactText(out, *impact, topology);
        }
        return 0;
    }
    EvaluateOptions options;
    options.linkLoads = report.links != LinkListing::None;
    options.timeline = report.timeline;
    options.stackRange = true;
    EvaluationWorkspace workspace;
    const Evaluation e = evaluate(layout, topology, workspace, options);
    if (!e.ok)
        throw InputError(file, "", "cannot price this step: " + e.error);
    workspace = EvaluationWorkspace(); // its buffers are not needed to write the report
    std::optional<FaultImpact> impact;
    if (healthy) {
        ImpactOptions io;
        io.links = std::max<std::size_t>(report.busiest, 10);
        impact = analyzeFaults(layout, *healthy, topology, io);
        if (o.flag("json"))
            report.extra.get()["faults"] = faultImpactJson(*impact, topology);
    }
    if (o.flag("json")) {
        writeEvaluationJson(out, e, topology, report);
    } else {
        writeEvaluationText(out, e, topology, report);
        if (impact)
            writeFaultImpactText(out, *impact, topology);
    }
    return 0;
}

} // namespace

int runEvaluate(const std::vector<std::string> &args, std::ostream &out)
{
    const Options o = parseOptions(args,
                                   2,
                                   {"top-links", "links", "what-if", "top", "threads"},
                                   {"json", "no-links", "timeline", "help"});
    if (o.flag("help")) {
        out << kEvaluateHelp;
        return 0;
    }
    const std::string &file = oneFile(o, "evaluate");
    return guardMemory(file + ": out of memory pricing the step; try --no-links"
                               + std::string(o.flag("timeline") ? ", or leave out --timeline" : ""),
                       [&] { return evaluateFile(o, file, out); });
}

} // namespace railyard::cli::detail
