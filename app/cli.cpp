#include "cli.h"
#include "cli_p.h"
#include "cliimport.h"
#include "cliplan.h"

#include "base/inputerror.h"
#include "base/jsoncursor.h"
#include "base/units.h"
#include "collectives/collective.h"
#include "faults/faultimpact.h"
#include "faults/faultreport.h"
#include "faults/faultsweep.h"
#include "layout/layout.h"
#include "report/collectivereport.h"
#include "report/report.h"
#include "report/servingreport.h"
#include "serving/servingevaluate.h"
#include "step/evaluate.h"
#include "topology/topology.h"

#include <railyard/version.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <new>
#include <numeric>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>

namespace railyard::cli {

using namespace railyard::engine;

namespace detail {

Options parseOptions(const std::vector<std::string> &args,
                     std::size_t first,
                     const std::set<std::string> &valued,
                     const std::set<std::string> &flags)
{
    Options o;
    bool optionsEnd = false;
    for (std::size_t i = first; i < args.size(); ++i) {
        const std::string &a = args[i];
        if (optionsEnd) {
            o.positional.push_back(a);
        } else if (a == "--") {
            optionsEnd = true; // what follows is a FILE, even if it starts with '-'
        } else if (a.rfind("--", 0) == 0 && a.size() > 2) {
            std::string name = a.substr(2);
            std::optional<std::string> inlineValue;
            if (const auto eq = name.find('='); eq != std::string::npos) {
                inlineValue = name.substr(eq + 1);
                name = name.substr(0, eq);
            }
            if (valued.count(name)) {
                if (inlineValue) {
                    o.values[name] = *inlineValue;
                } else {
                    if (i + 1 >= args.size())
                        throw UsageError("--" + name + " needs a value");
                    o.values[name] = args[++i];
                }
            } else if (flags.count(name)) {
                if (inlineValue)
                    throw UsageError("--" + name + " takes no value, got '" + echo(*inlineValue)
                                     + "'");
                o.flags.insert(name);
            } else {
                throw UsageError("unknown option --" + echo(name));
            }
        } else if (a.size() > 1 && a[0] == '-') {
            throw UsageError("unknown option " + echo(a)
                             + " (a FILE starting with '-': put -- "
                               "before it)");
        } else {
            o.positional.push_back(a);
        }
    }
    return o;
}

// The one layout FILE a subcommand takes (usage error otherwise).
const std::string &oneFile(const Options &o, const char *subcommand)
{
    if (o.positional.size() != 1)
        throw UsageError(std::string(subcommand)
                         + (o.positional.empty() ? " needs a layout FILE" : " takes one FILE"));
    return o.positional[0];
}

namespace {

template<class F>
engine::Topology naming(const std::string &file, F build)
{
    try {
        return build();
    } catch (const InputError &e) {
        if (!e.file().empty())
            throw;
        throw InputError(file, e.where(), e.message());
    }
}

} // namespace

engine::Topology topologyOf(const engine::ClusterConfig &cluster, const std::string &file)
{
    return naming(file, [&] { return buildTopology(cluster, Catalog::builtin()); });
}

engine::Topology topologyWithFaults(const engine::Topology &healthy,
                                    const std::vector<engine::Fault> &faults,
                                    const std::string &file)
{
    return naming(file, [&] { return withFaults(healthy, faults); });
}

} // namespace detail

namespace {

using detail::guardMemory;
using detail::oneFile;
using detail::Options;
using detail::OutOfMemory;
using detail::parseOptions;
using detail::topologyOf;
using detail::topologyWithFaults;
using detail::UsageError;

const char *kCollectiveHelp
        = "usage: railyard collective FILE --op OP --size SIZE [--gpus LIST] [--algo ALGO]\n"
          "                           [--efficiency E] [--links] [--json]\n"
          "\n"
          "Estimates one collective on the GPUs of the layout FILE.\n"
          "  --op OP          all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, "
          "sendrecv\n"
          "  --size SIZE      nccl-tests' size: 14GB, 8GiB, 512MB (GB = 1e9 bytes, GiB = 2^30)\n"
          "  --gpus LIST      the ranks' GPUs in order, e.g. 0-7,16 (default: every GPU)\n"
          "  --algo ALGO      auto (as NCCL would pick; default), ring, tree, nvls, sharp,\n"
          "                   hierarchical, or flat-ring (the seed article's textbook estimate)\n"
          "  --efficiency E   achieved fraction of line rate for flat-ring (default: the layout's\n"
          "                   tuning.efficiency, else 1.0)\n"
          "  --links          also print the bytes each link carries\n"
          "  --json           print one JSON object\n";

int collective(const Options &o, const std::string &file, std::ostream &out)
{
    const auto opText = o.value("op");
    if (!opText)
        throw UsageError("collective needs --op");
    const auto op = collectiveOpFromString(*opText);
    if (!op)
        throw UsageError("unknown --op '" + echo(*opText)
                         + "' (expected all_reduce, all_gather, reduce_scatter, all_to_all, "
                           "broadcast or sendrecv)");
    const auto sizeText = o.value("size");
    if (!sizeText)
        throw UsageError("collective needs --size");
    const std::string algoText = o.value("algo").value_or("auto");
    const auto algo = algorithmFromString(algoText);
    if (!algo)
        throw UsageError("unknown --algo '" + echo(algoText)
                         + "' (expected auto, ring, tree, nvls, sharp, hierarchical or "
                           "flat-ring)");
    // Every value is checked before the file is read: a malformed one is a usage error.
    CollectiveRequest req;
    req.op = *op;
    req.algorithm = *algo;
    req.wantLinks = o.flag("links");
    try {
        req.bytes = static_cast<double>(parseSize(*sizeText));
    } catch (const InputError &e) {
        throw UsageError("--" + e.message()); // "--size '14XB': ..."
    }
    const auto gpus = o.value("gpus");
    if (gpus) {
        try {
            parseIndexRanges(*gpus);
        } catch (const InputError &e) {
            throw UsageError("--gpus: " + e.message());
        }
    }
    std::optional<double> efficiency;
    if (const auto e = o.value("efficiency")) {
        std::size_t used = 0;
        double v = 0;
        try {
            v = std::stod(*e, &used);
        } catch (...) {
            used = 0;
        }
        if (used != e->size() || !(v > 0 && v <= 1))
            throw UsageError("--efficiency '" + echo(*e) + "': expected a number in (0, 1]");
        efficiency = v;
    }
    const Layout layout = readLayoutFile(file);
    const Topology topology = topologyOf(layout.cluster, file);
    if (gpus) {
        // Well formed, but this cluster's GPUs are what it must name: a problem of the file.
        try {
            req.gpus = parseIndexList(*gpus, topology.gpuCount());
        } catch (const InputError &e) {
            throw InputError(file, "", "--gpus: " + e.message());
        }
    }
    req.efficiency = efficiency ? *efficiency : layout.cluster.tuning.efficiency.value_or(1.0);
    const CollectiveResult r = estimateCollective(topology, req);

    if (o.flag("json")) {
        out << jsonDocument(collectiveJson(r, req, topology));
    } else {
        out << toString(r.op) << " of " << formatBytes(r.bytes) << " on " << r.ranks << " GPUs ("
            << toString(r.algorithm) << ")\n";
        out << "  time    " << formatSeconds(r.timeS) << "\n";
        out << "  algbw   " << formatNumber(r.algbwGBps, 4) << " GB/s\n";
        out << "  busbw   " << formatNumber(r.busbwGBps, 4) << " GB/s\n";
        out << "  bound   " << terminalText(r.bottleneck) << " at "
            << formatNumber(r.bottleneckGBps, 4) << " GB/s per GPU\n";
        for (const auto &n : r.notes)
            out << "  note    " << terminalText(n) << "\n";
        if (req.wantLinks)
            for (const LinkBytes &lb : r.links)
                out << "  link    " << terminalText(topology.linkName(lb.link)) << ": "
                    << formatBytes(lb.up) << " up, " << formatBytes(lb.down) << " down\n";
    }
    return 0;
}

int runCollective(const std::vector<std::string> &args, std::ostream &out)
{
    const Options o = parseOptions(args,
                                   2,
                                   {"op", "size", "gpus", "algo", "efficiency"},
                                   {"links", "json", "help"});
    if (o.flag("help")) {
        out << kCollectiveHelp;
        return 0;
    }
    const std::string &file = oneFile(o, "collective");
    return guardMemory(file + ": out of memory estimating the collective",
                       [&] { return collective(o, file, out); });
}

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

// The subcommands this version runs.
const std::set<std::string> kSubcommands = {"collective", "evaluate", "export", "import", "plan"};

// Qt's own options (QGuiApplication, QApplication and the xcb platform), in their one- and
// two-dash forms, "-name value" or "-name=value": `valued` takes a value. Any other option is
// not the GUI's.
bool isQtOption(std::string a, bool &valued)
{
    static const std::set<std::string> withValue = {"-platform",
                                                    "-platformpluginpath",
                                                    "-platformtheme",
                                                    "-plugin",
                                                    "-qmljsdebugger",
                                                    "-style",
                                                    "-stylesheet",
                                                    "-session",
                                                    "-display",
                                                    "-name",
                                                    "-geometry",
                                                    "-title",
                                                    "-qwindowgeometry",
                                                    "-qwindowtitle",
                                                    "-qwindowicon",
                                                    "-visual",
                                                    "-ncols",
                                                    "-cmap",
                                                    "-im"};
    static const std::set<std::string> flags
            = {"-reverse", "-widgetcount", "-nograb", "-dograb", "-sync", "-testability"};
    if (a.rfind("--", 0) == 0)
        a.erase(0, 1);
    const auto eq = a.find('=');
    const bool inlineValue = eq != std::string::npos;
    if (inlineValue)
        a.erase(eq);
    valued = withValue.count(a) > 0 && !inlineValue;
    return withValue.count(a) > 0 || (flags.count(a) > 0 && !inlineValue);
}

// A word that names a subcommand rather than a file: no path separator, no extension.
bool isBareWord(const std::string &s)
{
    return !s.empty() && s[0] != '-' && s.find_first_of("/.") == std::string::npos;
}

// A message from anywhere, kept to a screenful whatever it echoes, with its control
// characters escaped (the parts a message quotes from a file already are; this catches the
// rest).
std::string bounded(const std::string &message)
{
    return message.size() <= 2000 ? terminalLines(message) : echo(message, 1000);
}

// Not a subcommand: the GUI's arguments (Qt's options and at most one FILE), or a usage error.
Outcome guiOrUsageError(const std::vector<std::string> &args, std::ostream &err)
{
    std::vector<std::string> files;
    std::string unknownOption; // the first option neither Qt's nor ours
    for (std::size_t i = 1; i < args.size(); ++i) {
        const std::string &a = args[i];
        if (a.size() > 1 && a[0] == '-') {
            bool valued = false;
            if (!isQtOption(a, valued)) {
                if (unknownOption.empty())
                    unknownOption = a;
            } else if (valued) {
                ++i;
            }
            continue;
        }
        files.push_back(a);
    }
    const std::string word = files.empty() ? std::string() : files.front();
    std::error_code ec;
    const bool exists = !word.empty() && std::filesystem::exists(word, ec);
    std::string problem;
    if (files.empty() || (files.size() == 1 && !word.empty() && (exists || !isBareWord(word)))) {
        if (unknownOption.empty())
            return {false, 0, word}; // the GUI, on FILE if one was given
        problem = "unknown option " + echo(unknownOption)
                  + " (before a subcommand: --help, --version, or Qt's options for the GUI; a "
                    "FILE starting with '-': write ./ before it)";
    } else if (word.empty()) {
        problem = "an empty argument (expected a layout FILE or a subcommand)";
    } else if (kSubcommands.count(word)) {
        problem = "'" + word + "' must be the first argument";
    } else if (isBareWord(word) && !exists) {
        std::string list;
        for (const auto &c : kSubcommands)
            list += (list.empty() ? "" : ", ") + c;
        problem = "unknown subcommand '" + echo(word) + "' (this version has: " + list
                  + "; to open a layout, give its file name)";
    } else {
        problem = "the GUI opens one layout FILE, got " + std::to_string(files.size()) + " ('"
                  + echo(word) + "', '" + echo(files[1]) + "'" + (files.size() > 2 ? ", ..." : "")
                  + ")";
    }
    err << "railyard: " << problem << "\n\n" << usage();
    return {true, 2, {}};
}

} // namespace

std::string noGuiMessage(const std::string &file)
{
    return "this railyard was built without its GUI (-DRAILYARD_BUILD_GUI=OFF), so it opens no "
           "window"
           + (file.empty() ? std::string() : " on '" + echo(file) + "'")
           + ": run a subcommand (railyard evaluate FILE, railyard --help), or build with the GUI";
}

std::string noDiagramMessage(const std::string &output)
{
    return "'" + echo(output)
           + "': diagrams (.svg, .png, .pdf) are drawn by the GUI build of railyard; this one "
             "was built without it (-DRAILYARD_BUILD_GUI=OFF). The reports (.md, .csv, .json) "
             "work here";
}

std::string usage()
{
    return "usage: railyard [FILE]                 open the GUI on FILE (default: one HGX H100 "
           "server)\n"
           "       railyard evaluate FILE [--json]\n"
           "       railyard collective FILE --op OP --size SIZE [options] [--json]\n"
           "       railyard export FILE -o OUT.svg|png|pdf|md|csv|json [options]\n"
           "       railyard import IN -o OUT.railyard.json [--gpu ID] [--json]\n"
           "       railyard plan FILE [--top N] [--objective OBJ] [--json] | --buy [options]\n"
           "       railyard --help | --version\n"
           "\n"
           "Railyard shows where a distributed training or serving job's traffic goes on a GPU\n"
           "cluster and what it costs. Subcommands run without a display; `railyard SUBCOMMAND "
           "--help`\n"
           "describes each. Exit status: 0 success, 1 bad input, 2 usage error.\n";
}

Outcome run(const std::vector<std::string> &args,
            std::ostream &out,
            std::ostream &err,
            const DiagramWriter &diagram)
{
    Outcome result;
    if (args.size() < 2)
        return result;
    const std::string &first = args[1];
    if (first == "--help" || first == "-h" || first == "help") {
        out << usage();
        return {true, 0, {}};
    }
    if (first == "--version" || first == "-v") {
        out << "railyard " << RAILYARD_VERSION << " (layout format " << kLayoutFormatVersion
            << ")\n";
        return {true, 0, {}};
    }
    if (!kSubcommands.count(first))
        return guiOrUsageError(args, err);
    result.handled = true;
    // A bad user catalog: every subcommand refuses (its numbers would come from another
    // catalog than the user's); its --help still answers, as --help and --version do above.
    if (const std::string &bad = Catalog::userCatalogError();
        !bad.empty() && std::find(args.begin() + 2, args.end(), "--help") == args.end()
        && std::find(args.begin() + 2, args.end(), "-h") == args.end()) {
        err << "railyard: " << bounded(bad) << "\n";
        return {true, 1, {}};
    }
    try {
        if (first == "collective")
            result.exitCode = runCollective(args, out);
        else if (first == "evaluate")
            result.exitCode = runEvaluate(args, out);
        else if (first == "plan")
            result.exitCode = runPlan(args, out, err);
        else if (first == "export")
            result.exitCode = detail::runExport(args, out, err, diagram);
        else if (first == "import")
            result.exitCode = runImport(args, out, err);
    } catch (const ImportUsageError &e) {
        err << "railyard import: " << bounded(e.what()) << "\n(see railyard import --help)\n";
        result.exitCode = 2;
    } catch (const UsageError &e) {
        err << "railyard " << first << ": " << bounded(e.what()) << "\n(see railyard " << first
            << " --help)\n";
        result.exitCode = 2;
    } catch (const OutOfMemory &e) {
        err << "railyard: " << bounded(e.what())
            << " (the cluster needs more memory than this process may use)\n";
        result.exitCode = 1;
    } catch (const std::bad_alloc &) {
        // A subcommand without a message of its own: name the files it was given.
        std::string files;
        for (std::size_t i = 2; i < args.size(); ++i)
            if (!args[i].empty() && args[i][0] != '-' && std::filesystem::is_regular_file(args[i]))
                files += (files.empty() ? "" : ", ") + args[i];
        err << "railyard " << first << ": " << (files.empty() ? std::string() : files + ": ")
            << "out of memory (the cluster needs more memory than this process may use; try a "
               "smaller cluster or fewer outputs)\n";
        result.exitCode = 1;
    } catch (const InputError &e) {
        err << "railyard: " << bounded(e.what()) << "\n";
        result.exitCode = 1;
    } catch (const std::exception &e) {
        err << "railyard: " << bounded(e.what()) << "\n";
        result.exitCode = 1;
    }
    out.flush();
    if (result.exitCode == 0 && !out) {
        err << "railyard: cannot write the output\n";
        result.exitCode = 1;
    }
    return result;
}

} // namespace railyard::cli
