#pragma once

#include "diagramexport.h"

#include <QRectF>
#include <QString>

namespace railyard {

namespace engine {
struct Evaluation;
struct Layout;
struct ServingEvaluation;
} // namespace engine

class ClusterScene;

// File > Export Review Report... and `railyard export FILE -o review.pdf --report`: the design
// review of the scene's document (training, or serving: engine::makeServingReviewReport) as one A4 PDF (a title page with the step time and its band,
// the diagram with its legend, the step breakdown chart, the step timeline, memory per stage,
// the hottest links, the warnings with their cost, the A/B comparison when A is pinned, the
// assumptions and where the model is unsure) or the same as Markdown (.md) with the diagram as
// an SVG beside it (engine::reviewDiagramPath). The content comes from the engine
// (engine::makeReviewReport); the pictures from the renderers the window uses. Written
// atomically and checked (a full disk leaves the file that was there and says why).
struct ReviewReportOptions
{
    QRectF source; // the diagram's part of the scene; null: the whole cluster
    QString date;  // the title page's date; empty: today
    // The state pinned as A for an A/B comparison, and the file it came from; null: none.
    const engine::Layout *pinnedLayout = nullptr;
    const engine::Evaluation *pinned = nullptr;
    // When the pinned layout serves: its serving numbers (a serving layout's report compares
    // serving with serving).
    const engine::ServingEvaluation *pinnedServing = nullptr;
    QString pinnedSource;
};

// Writes the report to `path` (.pdf or .md). On failure returns false and sets `error` to a
// message naming the file and why. The band is the whole band (the stack range finished first).
bool exportReviewReport(ClusterScene &scene,
                        const QString &path,
                        const ReviewReportOptions &options,
                        QString *error);

// Headless: reads the layout, and `comparePath` (when not empty) as A, and writes the report.
bool exportLayoutReviewReport(const QString &layoutPath,
                              const QString &out,
                              const QString &comparePath,
                              const DiagramRegion &region,
                              QString *error);

} // namespace railyard
