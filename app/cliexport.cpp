// `railyard export`: a layout's diagram (SVG, PNG, PDF, drawn by the executable's
// DiagramWriter) or its report (Markdown, CSV of the per-link loads, JSON of every number),
// written without a display.
#include "cli.h"
#include "cli_p.h"

#include "base/inputerror.h"
#include "base/outputfile.h"
#include "base/units.h"
#include "layout/layout.h"
#include "report/report.h"
#include "report/servingreport.h"
#include "serving/servingevaluate.h"
#include "step/evaluate.h"
#include "topology/topology.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <ostream>

namespace railyard::cli::detail {

using namespace railyard::engine;

namespace {

const char *kExportHelp
        = "usage: railyard export FILE -o OUT [--scale S | --width N] [--all-links] [--at "
          "SECONDS]\n"
          "\n"
          "Writes the layout FILE as a diagram or a report; the format is OUT's suffix:\n"
          "  .svg .pdf        the whole cluster with its legend and title block (text stays "
          "text)\n"
          "  .png             the same as an image, at most 8,192 pixels wide and high\n"
          "A diagram too large to draw every device legibly (16,384 GPUs) shows scalable units "
          "and\n"
          "racks with their names and the fabric instead.\n"
          "  .md              the priced step as a Markdown report (numbers, breakdown, links, "
          "warnings)\n"
          "  .csv             the load on every link with traffic, one row per link\n"
          "  .json            every number (evaluate --json with every link)\n"
          "With -o - the Markdown report goes to standard output.\n"
          "  -o, --output OUT  the file to write (replaced whole, never left half written)\n"
          "  --scale S         PNG only: 0.1 to 8 pixels per diagram unit (2 doubles the width "
          "and\n"
          "                    height), not bounded to 8,192 pixels\n"
          "  --width N         PNG only: N pixels wide (16 to 32768), the height in proportion\n"
          "  --all-links       Markdown and CSV: every link, idle ones included\n"
          "  --at SECONDS      the link load at that moment of the step: a diagram draws it, a\n"
          "                    report adds utilization_at per link (JSON also at_s)\n";

std::string momentPastStep(double at, double stepS)
{
    return "--at " + formatSeconds(at) + " is past the end of the step, which lasts "
           + formatSeconds(stepS) + "; give a time from 0 to the step time";
}

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) {
        return static_cast<char>(std::tolower(c));
    });
    return s;
}

void writeReport(const std::string &format,
                 const std::string &file,
                 const std::string &output,
                 bool allLinks,
                 double at,
                 std::ostream &out,
                 std::ostream &err)
{
    // The output is checked before the work: a refused one fails fast and writes nothing.
    if (output != "-")
        checkOutputFile(output, {file});
    const Layout layout = readLayoutFile(file);
    const Topology topology = buildTopology(layout.cluster, Catalog::builtin());
    if (layout.isServing()) {
        // Serving: the JSON report (evaluate --json's) with every link; Markdown, CSV and
        // moments of a serving timeline come next.
        if (format != "json" || at >= 0)
            throw InputError(file,
                             "",
                             "a serving workload is exported as .json for now (railyard "
                             "evaluate FILE --json prints the same); .md, .csv and --at come next");
        const ServingEvaluation e = evaluateServing(layout, topology);
        if (!e.ok)
            throw InputError(file, "", "cannot price this serving workload: " + e.error);
        ReportOptions report;
        report.title = layout.title.empty() ? file : layout.title;
        report.links = LinkListing::All;
        const auto write = [&](std::ostream &s) { writeServingJson(s, e, topology, report); };
        if (output == "-") {
            write(out);
            return;
        }
        const OutputTarget written = writeOutputFile(output, write, {file});
        if (written.followedSymlink)
            err << "railyard export: " << written.notice() << "\n";
        return;
    }
    EvaluateOptions options;
    options.linkLoads = true;
    options.timeline = at >= 0;
    EvaluationWorkspace workspace;
    const Evaluation e = evaluate(layout, topology, workspace, options);
    if (!e.ok)
        throw InputError(file, "", "cannot price this step: " + e.error);
    if (at > e.stepTimeS)
        throw InputError(file, "", momentPastStep(at, e.stepTimeS));
    ReportOptions report;
    report.title = layout.title.empty() ? file : layout.title;
    report.links = format == "json" || allLinks ? LinkListing::All : LinkListing::Busiest;
    report.at = at;
    const auto write = [&](std::ostream &s) {
        if (format == "md")
            writeEvaluationMarkdown(s, e, topology, report);
        else if (format == "csv")
            writeLinkLoadsCsv(s, e, topology, allLinks, at);
        else
            writeEvaluationJson(s, e, topology, report);
    };
    if (output == "-") {
        write(out);
        return;
    }
    const OutputTarget written = writeOutputFile(output, write, {file});
    if (written.followedSymlink)
        err << "railyard export: " << written.notice() << "\n";
}

} // namespace

int runExport(const std::vector<std::string> &argsIn,
              std::ostream &out,
              std::ostream &err,
              const DiagramWriter &diagram)
{
    std::vector<std::string> args = argsIn;
    for (std::size_t i = 2; i < args.size(); ++i)
        if (args[i] == "-o")
            args[i] = "--output";
    const Options o = parseOptions(args,
                                   2,
                                   {"output", "scale", "width", "at"},
                                   {"all-links", "help"});
    if (o.flag("help")) {
        out << kExportHelp;
        return 0;
    }
    const std::string &file = oneFile(o, "export");
    const auto output = o.value("output");
    if (!output || output->empty())
        throw UsageError("export needs -o OUT (OUT.svg, .png, .pdf, .md, .csv or .json)");
    const std::string ext = lower(std::filesystem::path(*output).extension().string());
    const std::string format = ext.empty() ? std::string() : ext.substr(1);
    const bool isDiagram = format == "svg" || format == "png" || format == "pdf";
    const bool isReport = format == "md" || format == "csv" || format == "json";
    if (*output != "-" && !isDiagram && !isReport)
        throw UsageError("cannot tell the format of '" + echo(*output)
                         + "': give it the suffix .svg, .png, .pdf, .md, .csv or .json");
    double scale = 1;
    if (const auto s = o.value("scale")) {
        std::size_t used = 0;
        try {
            scale = std::stod(*s, &used);
        } catch (...) {
            used = 0;
        }
        if (used != s->size() || !std::isfinite(scale) || scale < 0.1 || scale > 8)
            throw UsageError("--scale takes a number from 0.1 to 8, got '" + echo(*s) + "'");
        if (format != "png")
            throw UsageError("--scale sets a PNG's size; " + echo(*output)
                             + " is not a PNG (SVG and PDF are vector)");
    }
    int width = 0;
    if (const auto w = o.value("width")) {
        std::size_t used = 0;
        long n = 0;
        try {
            n = std::stol(*w, &used);
        } catch (...) {
            used = 0;
        }
        if (used != w->size() || n < 16 || n > 32768)
            throw UsageError("--width takes a whole number of pixels from 16 to 32768, got '"
                             + echo(*w) + "'");
        if (format != "png")
            throw UsageError("--width sets a PNG's size; " + echo(*output)
                             + " is not a PNG (SVG and PDF are vector)");
        if (o.value("scale"))
            throw UsageError("--width and --scale both set the PNG's size: give one");
        width = static_cast<int>(n);
    }
    if (o.flag("all-links") && isDiagram)
        throw UsageError(
                "--all-links lists links in a report (.md, .csv); a diagram shows them all");
    double at = -1;
    if (const auto atText = o.value("at")) {
        std::size_t used = 0;
        double t = -1;
        try {
            t = std::stod(*atText, &used);
        } catch (...) {
            used = 0;
        }
        if (used != atText->size() || !std::isfinite(t) || t < 0)
            throw UsageError("--at takes a time in seconds from the start of the step, got '"
                             + echo(*atText) + "'");
        at = t;
    }

    if (*output == "-") {
        if (isDiagram)
            throw UsageError("a diagram goes to a file: -o OUT.svg, .png or .pdf");
        return guardMemory(file + ": out of memory while writing the report; try evaluate --json",
                           [&] {
                               writeReport("md", file, "-", o.flag("all-links"), at, out, err);
                               return 0;
                           });
    }
    if (isReport) {
        return guardMemory(*output + ": out of memory while writing the report of " + file
                                   + "; try .csv, or leave out --all-links",
                           [&] {
                               writeReport(format, file, *output, o.flag("all-links"), at, out, err);
                               return 0;
                           });
    }
    if (!diagram)
        throw UsageError(noDiagramMessage(*output));
    // Drawn by Qt (QSaveFile), into the checked target: a symlink's regular file, never a
    // device, a FIFO, a folder or the layout itself.
    const OutputTarget target = checkOutputFile(*output, {file});
    return guardMemory(*output + ": out of memory while exporting the diagram of " + file
                               + "; try --width, or a PNG instead of SVG or PDF",
                       [&] {
                           diagram(DiagramRequest{file,
                                                  target.target,
                                                  format,
                                                  scale,
                                                  at,
                                                  o.value("scale").has_value(),
                                                  width});
                           if (target.followedSymlink)
                               err << "railyard export: " << target.notice() << "\n";
                           return 0;
                       });
}

} // namespace railyard::cli::detail
