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
#include "report/reviewreport.h"
#include "report/servingreport.h"
#include "serving/servingevaluate.h"
#include "step/evaluate.h"
#include "topology/topology.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <ostream>

namespace railyard::cli::detail {

using namespace railyard::engine;

namespace {

const char *kExportHelp
        = "usage: railyard export FILE -o OUT [--region PART] [--scale S | --width N]\n"
          "                       [--all-links] [--at [request:]TIME]\n"
          "       railyard export FILE -o OUT.pdf|OUT.md --report [--compare A_FILE]\n"
          "\n"
          "Writes the layout FILE as a diagram or a report; the format is OUT's suffix:\n"
          "  .svg .pdf        the whole cluster with its legend and title block (text stays "
          "text)\n"
          "  .png             the same as an image, at most 8,192 pixels wide and high\n"
          "A diagram too large to draw every device legibly (16,384 GPUs) shows scalable units "
          "and\n"
          "racks with their names and the load on the links, on a page 1,400 units wide that "
          "reads\n"
          "at a document's width (its PNG --scale or --width times sharper); --region draws a "
          "part\n"
          "of it at full detail.\n"
          "  .md              the priced step as a Markdown report (numbers, breakdown, links, "
          "warnings);\n"
          "                   serving: TTFT, TPOT and tokens/s with their bands, the decode step\n"
          "                   and prefill, memory per GPU, pools, the hottest links, warnings\n"
          "  .csv             the load on every link with traffic, one row per link (serving: per\n"
          "                   decode step, and bytes_per_request)\n"
          "  .json            every number (evaluate --json with every link)\n"
          "With -o - the Markdown report goes to standard output.\n"
          "  -o, --output OUT  the file to write (replaced whole, never left half written)\n"
          "  --region PART     a diagram of part of the cluster: the smallest rectangle holding\n"
          "                      gpu:0-63          GPUs (as the canvas numbers them, from 0)\n"
          "                      node:16-31,40     servers (trays on NVL72 racks)\n"
          "                      rack:2-3          racks\n"
          "                      su:0              scalable units (the blocks under one set of "
          "leaves)\n"
          "                      area:X,Y,W,H      canvas units (1 = one pixel at 100% zoom)\n"
          "  --scale S         PNG only: 0.1 to 8 pixels per diagram unit (2 doubles the width "
          "and\n"
          "                    height), not bounded to 8,192 pixels\n"
          "  --width N         PNG only: N pixels wide (16 to 32768), the height in proportion\n"
          "  --all-links       Markdown and CSV: every link, idle ones included\n"
          "  --at TIME         the link load at that moment of the step (of the decode step on a\n"
          "                    serving layout): a diagram draws it, a report adds utilization_at\n"
          "                    per link (JSON also at_s, and on a serving layout at_timeline and\n"
          "                    at_phases). TIME is seconds (0.0042) or has a unit: 4.2ms, 150us\n"
          "  --at request:TIME serving: that moment of one request's life (waiting, prefill, the\n"
          "                    KV transfer, its decode steps: evaluate --timeline's\n"
          "                    request_timeline) instead of the decode step; decode:TIME is the\n"
          "                    decode step\n"
          "  --report          a design-review report: an A4 PDF (title page, the diagram, the "
          "step\n"
          "                    breakdown, timeline and memory per stage, the hottest links, the\n"
          "                    warnings with their cost, the assumptions and where the model is\n"
          "                    unsure), or the same as Markdown (.md), which links the diagram\n"
          "                    written beside it as OUT-diagram.svg\n"
          "  --compare A_FILE  with --report: the layout A_FILE as A of an A/B comparison, FILE "
          "as B\n";

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

bool parseWhole(const std::string &text, int &value)
{
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return !text.empty() && ec == std::errc() && ptr == text.data() + text.size() && value >= 0;
}

bool parseReal(const std::string &text, double &value)
{
    std::size_t used = 0;
    try {
        value = std::stod(text, &used);
    } catch (...) {
        return false;
    }
    return used == text.size() && std::isfinite(value);
}

std::vector<std::string> split(const std::string &text, char by)
{
    std::vector<std::string> parts;
    std::size_t pos = 0;
    while (true) {
        const std::size_t next = text.find(by, pos);
        parts.push_back(
                text.substr(pos, next == std::string::npos ? std::string::npos : next - pos));
        if (next == std::string::npos)
            return parts;
        pos = next + 1;
    }
}

// Writes a report to standard output ("-") or to `output` as a regular file, saying when a
// symbolic link was followed.
template<typename Write>
void writeToOutput(const std::string &output,
                   const std::string &file,
                   std::ostream &out,
                   std::ostream &err,
                   const Write &write)
{
    if (output == "-") {
        write(out);
        return;
    }
    const OutputTarget written = writeOutputFile(output, write, {file});
    if (written.followedSymlink)
        err << "railyard export: " << written.notice() << "\n";
}

// `--at`: a moment, in seconds, of the step (a serving layout's decode step) or, with
// "request:", of one serving request's life.
struct Moment
{
    double at = -1; // < 0: none
    bool request = false;
    std::string text; // as given, for messages
};

// "0.0042", "4.2ms", "150us", "2s", "request:12ms", "decode:1ms".
Moment parseMoment(const std::string &text)
{
    const auto bad = [&](const std::string &why) {
        return UsageError("--at takes a time in seconds from the start of the step (0.0042, 4.2ms, "
                          "150us), or request:TIME for a moment of one serving request's life; "
                          + why + ", got '" + echo(text) + "'");
    };
    Moment m;
    m.text = text;
    std::string value = text;
    if (const std::size_t colon = text.find(':'); colon != std::string::npos) {
        const std::string timeline = lower(text.substr(0, colon));
        if (timeline == "request")
            m.request = true;
        else if (timeline != "decode" && timeline != "step")
            throw bad("'" + echo(timeline) + "' is not a timeline (request: or decode:)");
        value = text.substr(colon + 1);
    }
    double unit = 1;
    for (const auto &[suffix, scale] : {std::pair<const char *, double>{"ms", 1e-3},
                                        {"us", 1e-6},
                                        {"\u00b5s", 1e-6},
                                        {"ns", 1e-9},
                                        {"s", 1.0}}) {
        const std::string sfx = suffix;
        if (value.size() > sfx.size()
            && value.compare(value.size() - sfx.size(), sfx.size(), sfx) == 0) {
            unit = scale;
            value.resize(value.size() - sfx.size());
            break;
        }
    }
    double t = 0;
    if (!parseReal(value, t))
        throw bad("'" + echo(value) + "' is not a number");
    if (t < 0)
        throw bad("a moment is not before the start");
    m.at = t * unit;
    return m;
}

void writeReport(const std::string &format,
                 const std::string &file,
                 const std::string &output,
                 bool allLinks,
                 const Moment &moment,
                 std::ostream &out,
                 std::ostream &err)
{
    const double at = moment.at;
    // The output is checked before the work: a refused one fails fast and writes nothing.
    if (output != "-")
        checkOutputFile(output, {file});
    const Layout layout = readLayoutFile(file);
    const Topology topology = detail::topologyOf(layout.cluster, file);
    if (moment.request && !layout.isServing())
        throw InputError(file,
                         "",
                         "--at " + moment.text
                                 + ": a request's life is a serving layout's; this layout trains "
                                   "(give --at TIME, a moment of its step)");
    if (layout.isServing()) {
        const ServingEvaluation e = evaluateServing(layout, topology);
        if (!e.ok)
            throw InputError(file, "", "cannot price this serving workload: " + e.error);
        if (moment.request && at > e.requestTimeline.stepS)
            throw InputError(file,
                             "",
                             "--at " + moment.text
                                     + " is past the end of one request's life, "
                                       "which lasts "
                                     + formatSeconds(e.requestTimeline.stepS) + " (TTFT "
                                     + formatSeconds(e.ttftS)
                                     + ", then its decode "
                                       "steps); give request: a time from 0 to "
                                     + formatSeconds(e.requestTimeline.stepS));
        if (!moment.request && at > e.decodeStepS)
            throw InputError(file,
                             "",
                             "--at " + formatSeconds(at)
                                     + " is past the end of the decode step, which lasts "
                                     + formatSeconds(e.decodeStepS)
                                     + "; give a time from 0 to the decode step's time");
        ReportOptions report;
        report.title = layout.title.empty() ? file : layout.title;
        report.links = format == "json" || allLinks ? LinkListing::All : LinkListing::Busiest;
        report.at = at;
        report.atRequest = moment.request;
        writeToOutput(output, file, out, err, [&](std::ostream &s) {
            if (format == "md")
                writeServingMarkdown(s, layout, e, topology, report);
            else if (format == "csv")
                writeServingCsv(s, e, topology, allLinks, at, moment.request);
            else
                writeServingJson(s, e, topology, report);
        });
        return;
    }
    EvaluateOptions options;
    options.linkLoads = true;
    options.timeline = at >= 0;
    options.stackRange = true;
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
    writeToOutput(output, file, out, err, write);
}

} // namespace

DiagramRegion parseRegion(const std::string &text)
{
    const auto bad = [&](const std::string &why) {
        return UsageError("--region '" + echo(text) + "': " + why
                          + " (expected gpu:0-63, node:16-31,40, rack:2, su:0 or area:X,Y,W,H)");
    };
    DiagramRegion region;
    region.text = text;
    const std::size_t colon = text.find(':');
    if (colon == std::string::npos)
        throw bad("no kind before a colon");
    const std::string kind = lower(text.substr(0, colon));
    const std::string list = text.substr(colon + 1);
    using Kind = DiagramRegion::Kind;
    if (kind == "gpu" || kind == "gpus")
        region.kind = Kind::Gpus;
    else if (kind == "node" || kind == "nodes" || kind == "server" || kind == "servers"
             || kind == "tray" || kind == "trays")
        region.kind = Kind::Nodes;
    else if (kind == "rack" || kind == "racks")
        region.kind = Kind::Racks;
    else if (kind == "su" || kind == "sus")
        region.kind = Kind::ScalableUnits;
    else if (kind == "area")
        region.kind = Kind::Area;
    else
        throw bad("unknown kind '" + echo(kind) + "'");
    if (region.kind == Kind::Area) {
        const std::vector<std::string> parts = split(list, ',');
        double v[4] = {};
        if (parts.size() != 4)
            throw bad("an area is four numbers X,Y,W,H");
        for (std::size_t i = 0; i < 4; ++i)
            if (!parseReal(parts[i], v[i]))
                throw bad("'" + echo(parts[i]) + "' is not a number");
        if (v[2] <= 0 || v[3] <= 0)
            throw bad("an area's width and height are above 0");
        region.x = v[0];
        region.y = v[1];
        region.width = v[2];
        region.height = v[3];
        return region;
    }
    for (const std::string &item : split(list, ',')) {
        const std::size_t dash = item.find('-');
        int first = 0, last = 0;
        if (dash == std::string::npos) {
            if (!parseWhole(item, first))
                throw bad("'" + echo(item) + "' is not an index (a whole number from 0)");
            last = first;
        } else if (!parseWhole(item.substr(0, dash), first)
                   || !parseWhole(item.substr(dash + 1), last)) {
            throw bad("'" + echo(item) + "' is not a range of indices such as 16-31");
        } else if (last < first) {
            throw bad("the range '" + echo(item) + "' runs backwards");
        }
        region.ranges.emplace_back(first, last);
    }
    return region;
}

// `--report`: the review report, drawn by Qt like a diagram. The outputs are checked before
// the work (the Markdown's diagram beside it too): a refused one fails fast and writes nothing.
int writeReviewReport(const std::string &file,
                      const std::string &output,
                      const std::string &format,
                      const std::string &compare,
                      const DiagramRegion &region,
                      std::ostream &err,
                      const DiagramWriter &diagram)
{
    if (!diagram)
        throw UsageError("'" + echo(output)
                         + "': review reports are drawn by the GUI build of railyard; this one "
                           "was built without it (-DRAILYARD_BUILD_GUI=OFF). The reports (.md, "
                           ".csv, .json) work here");
    std::vector<std::string> inputs = {file};
    if (!compare.empty())
        inputs.push_back(compare);
    const OutputTarget target = checkOutputFile(output, inputs);
    if (format == "md")
        checkOutputFile(reviewDiagramPath(output), inputs);
    return guardMemory(output + ": out of memory while writing the review report of " + file, [&] {
        DiagramRequest request;
        request.file = file;
        request.output = target.target;
        request.format = format;
        request.region = region;
        request.report = true;
        request.compare = compare;
        diagram(request);
        if (target.followedSymlink)
            err << "railyard export: " << target.notice() << "\n";
        return 0;
    });
}

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
                                   {"output", "scale", "width", "at", "region", "compare"},
                                   {"all-links", "help", "report"});
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
    const bool review = o.flag("report");
    if (review && format != "pdf" && format != "md")
        throw UsageError("--report writes a review report as .pdf or .md, not '" + echo(*output)
                         + "'");
    if (o.value("compare") && !review)
        throw UsageError("--compare A_FILE pins A for the A/B comparison of a review report: "
                         "give --report too");
    if (o.flag("all-links") && (isDiagram || review))
        throw UsageError(review ? "--all-links lists links in a report (.md, .csv); a review "
                                  "report lists the busiest"
                                : "--all-links lists links in a report (.md, .csv); a diagram "
                                  "shows them all");
    if (review && o.value("at"))
        throw UsageError("--at draws one moment of the step; a review report shows the whole "
                         "step (its timeline included)");
    DiagramRegion region;
    if (const auto r = o.value("region")) {
        if (!isDiagram && !review)
            throw UsageError("--region chooses the part of the cluster a diagram shows; "
                             + echo(*output) + " is not a diagram (.svg, .png, .pdf)");
        region = parseRegion(*r);
    }
    Moment moment;
    if (const auto atText = o.value("at"))
        moment = parseMoment(*atText);

    if (review)
        return writeReviewReport(file,
                                 *output,
                                 format,
                                 o.value("compare").value_or(""),
                                 region,
                                 err,
                                 diagram);
    if (*output == "-") {
        if (isDiagram)
            throw UsageError("a diagram goes to a file: -o OUT.svg, .png or .pdf");
        return guardMemory(file + ": out of memory while writing the report; try evaluate --json",
                           [&] {
                               writeReport("md", file, "-", o.flag("all-links"), moment, out, err);
                               return 0;
                           });
    }
    if (isReport) {
        return guardMemory(*output + ": out of memory while writing the report of " + file
                                   + "; try .csv, or leave out --all-links",
                           [&] {
                               writeReport(format,
                                           file,
                                           *output,
                                           o.flag("all-links"),
                                           moment,
                                           out,
                                           err);
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
                           DiagramRequest request;
                           request.file = file;
                           request.output = target.target;
                           request.format = format;
                           request.scale = scale;
                           request.at = moment.at;
                           request.atRequest = moment.request;
                           request.scaleGiven = o.value("scale").has_value();
                           request.width = width;
                           request.region = region;
                           diagram(request);
                           if (target.followedSymlink)
                               err << "railyard export: " << target.notice() << "\n";
                           return 0;
                       });
}

} // namespace railyard::cli::detail
