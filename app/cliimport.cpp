#include "cliimport.h"

#include "base/inputerror.h"
#include "base/jsoncursor.h"
#include "base/outputfile.h"
#include "import/importer.h"
#include "layout/catalog.h"
#include "layout/layout.h"
#include "report/report.h"

#include <ostream>

namespace railyard::cli {

using namespace railyard::engine;

namespace {

const char *kImportHelp
        = "usage: railyard import IN -o OUT.railyard.json [--gpu ID] [--json]\n"
          "\n"
          "Reads a cluster's own file and writes the nearest Railyard layout:\n"
          "  nvidia-smi topo -m output     GPUs, NICs, NVLink counts, PCIe relations, affinity\n"
          "  NCCL topology XML             NCCL_TOPO_DUMP_FILE dumps and NCCL_TOPO_FILE inputs\n"
          "  NCCL graph XML                NCCL_GRAPH_DUMP_FILE rings and trees (kept for an "
          "overlay)\n"
          "  nccl-tests logs               all_reduce_perf and the others; calibrates the\n"
          "                                layout's tuning.efficiency to the measured busbw\n"
          "The format is found from the content. What the layout cannot carry is listed in its\n"
          "notes. A summary goes to stderr.\n"
          "  -o, --output OUT  the layout file to write\n"
          "  --gpu ID          the catalog GPU to use (default: inferred from the file)\n"
          "  --json            print the summary as JSON: gpus, nics, links (by kind),\n"
          "                    measurements (op, size_bytes, time_us, algbw_gbps, busbw_gbps,\n"
          "                    in_place)\n";

} // namespace

int runImport(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    std::vector<std::string> files;
    std::string output, gpu;
    bool json = false;
    for (std::size_t i = 2; i < args.size(); ++i) {
        const std::string &a = args[i];
        const auto value = [&](const std::string &name) {
            if (const auto eq = a.find('='); eq != std::string::npos)
                return a.substr(eq + 1);
            if (i + 1 >= args.size())
                throw ImportUsageError(name + " needs a value");
            return args[++i];
        };
        if (a == "--help" || a == "-h") {
            out << kImportHelp;
            return 0;
        } else if (a == "--json") {
            json = true;
        } else if (a == "-o" || a == "--output" || a.rfind("--output=", 0) == 0) {
            output = value("--output");
        } else if (a == "--gpu" || a.rfind("--gpu=", 0) == 0) {
            gpu = value("--gpu");
        } else if (a.size() > 1 && a[0] == '-') {
            throw ImportUsageError("unknown option " + echo(a));
        } else {
            files.push_back(a);
        }
    }
    if (files.size() != 1)
        throw ImportUsageError(files.empty() ? "import needs a file IN"
                                             : "import takes one file IN");
    if (output.empty())
        throw ImportUsageError("import needs -o OUT.railyard.json");
    const Catalog &catalog = Catalog::builtin();
    if (!gpu.empty() && !catalog.gpu(gpu))
        throw ImportUsageError("unknown --gpu " + quote(gpu)
                               + " (expected one of: " + catalog.gpuIdList() + ")");

    // The output is checked before the work: a refused one fails fast and writes nothing.
    checkOutputFile(output, {files[0]});
    const ImportedMachine machine = importFile(files[0]);
    ImportOptions options;
    options.gpu = gpu;
    const Layout layout = layoutFromImport(machine, catalog, options);
    const OutputTarget written = writeLayoutFile(layout, output, {files[0]});
    if (written.followedSymlink)
        err << "railyard import: " << written.notice() << "\n";

    if (json) {
        Json summary = importSummary(machine);
        // Which fault would explain a log short of the model (import/faulthypotheses.h).
        const Json &imported = layout.original.get().value("imported", Json::object());
        if (imported.is_object() && imported.contains("calibration")
            && imported["calibration"].contains("fault_hypotheses"))
            summary["fault_hypotheses"] = imported["calibration"]["fault_hypotheses"];
        out << jsonDocument(summary);
    } else {
        const auto counts = machine.linkCounts();
        std::string links;
        for (const auto &[kind, n] : counts)
            links += (links.empty() ? "" : ", ") + std::to_string(n) + " " + kind;
        err << "railyard import: " << echo(files[0]) << " (" << terminalText(machine.format)
            << "): " << machine.gpus.size() << " GPUs, " << machine.nics.size() << " NICs"
            << (links.empty() ? "" : "; links: " + links);
        if (!machine.measurements.empty())
            err << "; " << machine.measurements.size() << " measurements of "
                << terminalText(machine.collective);
        err << "\n" << terminalLines(layout.notes) << "\nwrote " << echo(output) << "\n";
    }
    return 0;
}

} // namespace railyard::cli
