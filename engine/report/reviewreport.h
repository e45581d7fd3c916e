#pragma once

#include "layout/layout.h"
#include "step/evaluate.h"
#include "topology/topology.h"

#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

namespace railyard::engine {

// A design-review report's content: every number and every sentence, for the two writers that
// lay it out (the Markdown below, the A4 PDF of widgets/export/reviewpdf). Text from the
// layout (its title, device names, messages that quote them) is held as plain one-line text
// (plainText: no control characters); the Markdown writer escapes it, the PDF draws it as is.

// A table: a header and rows of cells.
struct ReviewTable
{
    std::vector<std::string> columns;
    std::vector<bool> numeric; // per column: a number, right-aligned
    std::vector<std::vector<std::string>> rows;
};

// The pictures a PDF draws in place (the Markdown links the diagram and keeps the tables).
enum class ReviewFigure { Diagram, StepBreakdown, Timeline, Memory };

struct ReviewBlock
{
    enum class Kind { Paragraph, Bullets, Table, Figure };
    Kind kind = Kind::Paragraph;
    std::string text;               // Paragraph; a Table's or a Figure's caption
    std::vector<std::string> items; // Bullets
    ReviewTable table;              // Table
    ReviewFigure figure = ReviewFigure::Diagram;
};

struct ReviewSection
{
    std::string heading;
    std::vector<ReviewBlock> blocks;
};

struct ReviewReport
{
    // The title page.
    std::string title;   // the layout's title (cut to 200 characters) or its file name
    std::string date;    // as the caller gives it ("4 December 2026")
    std::string source;  // the layout's file name, or empty
    std::string cluster; // "2,048 servers of 8 × H100-SXM · 16,384 GPUs · 512 leaves, 32 spines"
    std::string workload; // "llama3.1-405b · TP 8 · PP 16 (VP 4) · DP 128"
    std::string training; // "sequence 8,192 · global batch 2,048 · micro-batch 1 · bf16 · ..."
    std::string stepTime; // "9.21 s"
    std::string stepBand; // "±8.3%: 8.45 s to 9.98 s"
    // What `training` and `stepTime` are: a serving layout's report shows its serving settings
    // and TPOT there (servingreport.h, makeServingReviewReport).
    std::string trainingLabel = "Training";
    std::string stepTimeLabel = "Step time";
    std::string comparedWith; // with an A/B comparison: what A is, in one line; else empty
    ReviewTable summary;      // the key numbers: quantity, value (and A, change with a pin)
    std::vector<ReviewSection> sections;
};

struct ReviewInput
{
    const Layout *layout = nullptr;
    const Topology *topology = nullptr;
    const Evaluation *evaluation = nullptr; // priced with link loads and the timeline
    std::string title;                      // the heading: the layout's title or file name
    std::string date;
    std::string source; // the layout's file name (empty: unsaved)
    // An A/B comparison: the state pinned as A (evaluation priced with link loads), and the
    // file it came from; null: none.
    const Layout *pinnedLayout = nullptr;
    const Evaluation *pinned = nullptr;
    std::string pinnedSource;
    std::size_t busiestLinks = 12;
    std::size_t changedLinks = 10;
};

// The report of a priced step (input.evaluation->ok). Throws std::invalid_argument when the
// step could not be priced (there is nothing to review).
ReviewReport makeReviewReport(const ReviewInput &input);

// The report as one Markdown document: a heading, the title page's lines and the key numbers,
// then each section (a figure is the image `diagramFile` for the diagram, and nothing for the
// charts, whose numbers are in the tables beside them). Every piece of text goes through
// markdownText(): a title holding "<script>" or "| # *" renders as written.
void writeReviewMarkdown(std::ostream &out,
                         const ReviewReport &report,
                         const std::string &diagramFile);

// Where a Markdown review report's diagram is written: beside it, "review.md" ->
// "review-diagram.svg" (a name without ".md" gains "-diagram.svg").
std::string reviewDiagramPath(const std::string &markdownPath);

// The rows of a table of memory per stage: consecutive stages that hold the same (to the
// GiB shown) are one row ("stages 1-14").
std::vector<std::vector<std::string>> memoryStageRows(const std::vector<double> &gibPerStage,
                                                      double hbmGiB);

} // namespace railyard::engine
