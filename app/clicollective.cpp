// `railyard collective FILE --op OP --size SIZE`: one collective priced on the layout's GPUs,
// as text or JSON, with the bytes on each link if asked.
#include "cli.h"
#include "cli_p.h"

#include "base/inputerror.h"
#include "base/jsoncursor.h"
#include "base/units.h"
#include "collectives/collective.h"
#include "layout/layout.h"
#include "report/collectivereport.h"
#include "report/report.h"
#include "topology/topology.h"

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace railyard::cli::detail {

using namespace railyard::engine;

namespace {

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

} // namespace

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

} // namespace railyard::cli::detail
