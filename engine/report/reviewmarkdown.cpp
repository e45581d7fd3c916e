#include "report/reviewreport.h"

#include "base/safetext.h"
#include "report/reportformat.h"

#include <filesystem>
#include <ostream>

// The design-review report as Markdown: GitHub's tables, every piece of text through
// markdownText(). What it says comes from makeReviewReport (reviewreport.cpp).

namespace railyard::engine {

using namespace reportformat;

namespace {

void writeTable(std::string &s, const ReviewTable &t)
{
    if (t.columns.empty())
        return;
    s += "|";
    for (const std::string &c : t.columns)
        s += " " + markdownText(c) + " |";
    s += "\n|";
    for (std::size_t i = 0; i < t.columns.size(); ++i)
        s += i < t.numeric.size() && t.numeric[i] ? "---:|" : "---|";
    s += "\n";
    for (const auto &row : t.rows) {
        s += "|";
        for (std::size_t i = 0; i < t.columns.size(); ++i)
            s += " " + (i < row.size() ? markdownText(row[i]) : std::string()) + " |";
        s += "\n";
    }
}

} // namespace

void writeReviewMarkdown(std::ostream &out, const ReviewReport &r, const std::string &diagramFile)
{
    Buffered b(out);
    std::string &s = b.text();
    s += "# " + markdownText(r.title) + "\n\n";
    s += "Design review";
    if (!r.date.empty())
        s += ", " + markdownText(r.date);
    if (!r.source.empty())
        s += ", of " + markdownText(r.source);
    s += ".\n\n";
    s += "- **Cluster**: " + markdownText(r.cluster) + "\n";
    s += "- **Workload**: " + markdownText(r.workload) + "\n";
    s += "- **" + markdownText(r.trainingLabel) + "**: " + markdownText(r.training) + "\n";
    s += "- **" + markdownText(r.stepTimeLabel) + "**: " + markdownText(r.stepTime) + " ("
         + markdownText(r.stepBand) + ")\n";
    if (!r.comparedWith.empty())
        s += "- **A/B**: " + markdownText(r.comparedWith) + "\n";
    s += "\n";
    writeTable(s, r.summary);
    for (const ReviewSection &section : r.sections) {
        s += "\n## " + markdownText(section.heading) + "\n";
        for (const ReviewBlock &block : section.blocks) {
            s += "\n";
            switch (block.kind) {
            case ReviewBlock::Kind::Paragraph: s += markdownText(block.text) + "\n"; break;
            case ReviewBlock::Kind::Bullets:
                for (const std::string &item : block.items)
                    s += "- " + markdownText(item) + "\n";
                break;
            case ReviewBlock::Kind::Table:
                if (!block.text.empty())
                    s += markdownText(block.text) + "\n\n";
                writeTable(s, block.table);
                break;
            case ReviewBlock::Kind::Figure:
                if (block.figure == ReviewFigure::Diagram && !diagramFile.empty()) {
                    // The file name as a link target: <...> keeps spaces, and escaping keeps it
                    // one link.
                    s += "![The cluster diagram](<" + markdownText(diagramFile) + ">)\n\n";
                }
                s += "*" + markdownText(block.text) + "*\n";
                break;
            }
            b.maybeFlush();
        }
    }
}

std::string reviewDiagramPath(const std::string &markdownPath)
{
    std::string base = markdownPath;
    const std::filesystem::path p(markdownPath);
    if (p.extension() == ".md" || p.extension() == ".MD")
        base.resize(base.size() - 3);
    return base + "-diagram.svg";
}

} // namespace railyard::engine
