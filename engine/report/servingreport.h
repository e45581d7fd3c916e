#pragma once

#include "report/report.h"
#include "report/reviewreport.h"
#include "serving/servingevaluate.h"
#include "topology/topology.h"

#include <array>
#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

namespace railyard::engine {

// The `evaluate --json` object of a serving layout (DESIGN.md, "Serving (inference)
// workloads"; README, "JSON output"). Links go out row by row, as the training report's.
void writeServingJson(std::ostream &out,
                      const ServingEvaluation &evaluation,
                      const Topology &topology,
                      const ReportOptions &options);
// The same for people.
void writeServingText(std::ostream &out,
                      const ServingEvaluation &evaluation,
                      const Topology &topology,
                      const ReportOptions &options);
// The same as a Markdown document: TTFT, TPOT and the rates with their bands, the decode step's
// and the prefill's breakdown, memory per GPU (per pool), the pools of a disaggregated layout,
// the per-tier summary and the busiest links (or every link), the warnings with their cost, the
// assumptions. Text from the layout goes through markdownText().
void writeServingMarkdown(std::ostream &out,
                          const Layout &layout,
                          const ServingEvaluation &evaluation,
                          const Topology &topology,
                          const ReportOptions &options);
// The per-link loads of a decode step as CSV: training's columns (report.h, writeLinkLoadsCsv;
// bytes_per_step is per decode step), utilization_at with `at` >= 0 (seconds into the decode
// step, or with `atRequest` into one request's life), then bytes_per_request. One row per link
// with bytes in a decode step or per request (every link with `allLinks`).
void writeServingCsv(std::ostream &out,
                     const ServingEvaluation &evaluation,
                     const Topology &topology,
                     bool allLinks = false,
                     double at = -1,
                     bool atRequest = false);
// The per-tier summary of a decode step's loads, with each tier's bytes per request.
struct ServingTierSummary
{
    LinkTierSummary decodeStep;
    double bytesPerRequest = 0;
};
std::vector<ServingTierSummary> summarizeServingLinks(const Topology &topology,
                                                      const ServingLinks &links);
// The `count` busiest links: highest decode-step utilization first, then most bytes per
// request, then lowest id; only links that carry something.
std::vector<int> busiestServingLinks(const ServingLinks &links, std::size_t count);
// The parts of a ServingBreakdown as the reports list them: "Compute", "Weights read", ...
struct ServingPartName
{
    const char *name;
    double ServingBreakdown::*member;
};
const std::array<ServingPartName, 8> &servingParts();

// A band as the range around its value: "\u00b112%", or "-38% / +62%" when it is a factor.
std::string servingBandText(const ServingBand &band);

// Per link, dense by link id, the utilization `at` seconds into the decode step (its
// timeline), or with `atRequest` into one request's life (requestTimeline); empty when `at` is
// negative or there is no timeline.
std::vector<float> servingLoadsAt(const ServingEvaluation &evaluation,
                                  const Topology &topology,
                                  double at,
                                  bool atRequest = false);
// The timeline `at` refers to: one decode step, or one request's life.
const StepTimeline &servingMomentTimeline(const ServingEvaluation &evaluation, bool atRequest);
// What runs `at` seconds into that timeline ("prefill: TP all-reduces", "KV cache transfer"),
// in order, each name once.
std::vector<std::string> servingPhasesAt(const ServingEvaluation &evaluation,
                                         double at,
                                         bool atRequest);

// A design-review report of a serving layout (reviewreport.h's structure): the title page with
// TPOT, TTFT and the rates and their bands; the diagram; where a decode step's and a prefill's
// time goes; the decode-step timeline; memory per GPU per pool; the pools; the hottest links;
// the warnings with their cost; the A/B comparison against a pinned serving layout; the
// assumptions. Throws std::invalid_argument when the layout could not be priced.
struct ServingReviewInput
{
    const Layout *layout = nullptr;
    const Topology *topology = nullptr;
    const ServingEvaluation *evaluation = nullptr; // priced with link loads and timelines
    std::string title;
    std::string date;
    std::string source;
    const Layout *pinnedLayout = nullptr;
    const ServingEvaluation *pinned = nullptr;
    std::string pinnedSource;
    std::size_t busiestLinks = 12;
};
ReviewReport makeServingReviewReport(const ServingReviewInput &input);

} // namespace railyard::engine
