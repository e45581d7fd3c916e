#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace railyard::cli {

// The headless command line (no Qt, no display): `railyard --help`, `--version`, and the
// subcommands of DESIGN.md. Exit status 0 on success, 1 on bad input, 2 on usage errors.
struct Outcome
{
    bool handled = false; // false: not a CLI invocation, open the GUI
    int exitCode = 0;
    std::string guiFile; // when not handled: the layout FILE to open (empty: the default one)
};

// The part of the cluster a diagram shows (`export --region`): the smallest rectangle that holds
// the GPUs, servers, racks or scalable units named (indices as the canvas numbers them, from 0),
// or an area of the canvas. The syntax is checked here; whether the indices exist is checked
// against the cluster when it is drawn.
struct DiagramRegion
{
    enum class Kind { Whole, Gpus, Nodes, Racks, ScalableUnits, Area };
    Kind kind = Kind::Whole;
    std::vector<std::pair<int, int>> ranges;    // first and last index (inclusive); not for Area
    double x = 0, y = 0, width = 0, height = 0; // Area: canvas units from the canvas's origin
    std::string text;                           // as given, for messages
};

// A diagram `railyard export` asks for (SVG, PNG or PDF), or a review report (PDF or Markdown). Drawing needs Qt, which this layer
// does not use: the executable supplies a DiagramWriter (main.cpp), which throws
// engine::InputError or std::runtime_error with a message naming the file on failure.
struct DiagramRequest
{
    std::string file;        // the layout
    std::string output;      // where the diagram goes
    std::string format;      // "svg", "png" or "pdf"
    double scale = 1;        // PNG: pixels per scene unit
    double at = -1;          // >= 0: the link load at that moment of the step, not the average
    bool atRequest = false;  // serving: `at` is a moment of one request's life (--at request:T)
    bool scaleGiven = false; // --scale given: as given; otherwise the PNG fits 8,192 pixels
    int width = 0;           // PNG: --width in pixels (0: from the scale)
    DiagramRegion region;    // the part of the cluster to draw (Whole: all of it)
    // A design-review report (`--report`: format "pdf" or "md") rather than a diagram; `compare`
    // is the layout pinned as A beside it (empty: no A/B comparison).
    bool report = false;
    std::string compare;
};
using DiagramWriter = std::function<void(const DiagramRequest &)>;

// The rule that keeps a mistyped or future subcommand out of the GUI: the GUI takes Qt's own
// options and at most one FILE. A first argument that is not an option, not an existing file
// and a bare word (no '/' and no '.') is a subcommand: a known one runs, any other is a usage
// error (exit 2) that names it and lists the subcommands; so is a second FILE.
// Output goes to `out` as it is made (every link of a large cluster is streamed, not gathered),
// messages to `err`.
// `diagram` draws the diagrams of `railyard export` (without one, they are an error).
Outcome run(const std::vector<std::string> &args,
            std::ostream &out,
            std::ostream &err,
            const DiagramWriter &diagram = {});

// The usage text printed by --help.
std::string usage();

// What a GUI-less build (-DRAILYARD_BUILD_GUI=OFF) says where a GUI build would open the
// window (on `file`, when not empty): there is none, use a subcommand (a usage error, exit 2).
std::string noGuiMessage(const std::string &file);

// What a build without a DiagramWriter says to `railyard export ... -o OUT.svg|png|pdf` (a
// usage error, exit 2): diagrams need the GUI build; the reports (.md, .csv, .json) work.
std::string noDiagramMessage(const std::string &output);

} // namespace railyard::cli
