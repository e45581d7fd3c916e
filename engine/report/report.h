#pragma once

#include "base/jsonvalue.h"
#include "step/evaluate.h"
#include "topology/topology.h"

#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

namespace railyard::engine {

// The links of one tier of the cluster (the kinds of device a link joins, and its kind):
// "gpu-nvswitch" NVLink, "gpu-pcie-switch" PCIe, "gpu-cpu" C2C, "nic-leaf" InfiniBand,
// "leaf-spine", "spine-core", ...
struct LinkTier
{
    DeviceKind from = DeviceKind::Gpu; // the end nearer the GPUs
    DeviceKind to = DeviceKind::Gpu;
    LinkKind kind = LinkKind::NvLink;
    std::string name() const; // "nic-leaf"
    bool operator==(const LinkTier &) const = default;
};
LinkTier linkTier(const Topology &topology, int link);

// The load on one tier over a step.
struct LinkTierSummary
{
    LinkTier tier;
    std::size_t links = 0;      // every link of the tier
    std::size_t loaded = 0;     // links with traffic
    double bytesPerStep = 0;    // both directions, summed over the tier's links
    double meanUtilization = 0; // over every link of the tier, idle ones included
    double maxUtilization = 0;
};
// One entry per tier present, nearest the GPUs first.
std::vector<LinkTierSummary> summarizeLinks(const Topology &topology, const LinkLoads &loads);
// The `count` busiest loaded links: highest utilization first, then lowest id.
std::vector<int> busiestLinks(const LinkLoads &loads, std::size_t count);
// The `count` links of highest utilization above 0 (dense by link id: a step's average, or a
// moment's from utilizationAt), busiest first, then lowest id: the Hottest Links list.
std::vector<int> busiestByUtilization(const std::vector<float> &utilization, std::size_t count);

enum class LinkListing {
    None,    // neither links nor tiers
    Busiest, // the per-tier summary and the busiest links
    All,     // the per-tier summary and every link, idle ones included
};

struct ReportOptions
{
    LinkListing links = LinkListing::Busiest;
    std::size_t busiest = 20;
    std::string title;     // the layout's title or file, for the text report
    bool timeline = false; // write `timeline` (needs evaluation.timeline)
    // >= 0: also each link's utilization at that moment of the step, in seconds from its start
    // (`utilization_at`; needs evaluation.timeline). Negative: the step average only.
    double at = -1;
    // Serving: `at` is a moment of one request's life (ServingEvaluation::requestTimeline:
    // waiting, prefill, KV transfer, its decode steps), not of the decode step.
    bool atRequest = false;
    // Keys added to the JSON object after `warnings` and `assumptions` (an evaluation with
    // faults adds `faults`: faults/faultreport.h).
    JsonValue extra;
};

// Per link, dense by link id, the utilization at `at` seconds into the step (utilizationAt on
// the evaluation's timeline); empty when `at` is negative or there is no timeline.
std::vector<float> linkLoadsAt(const Evaluation &evaluation, const Topology &topology, double at);

// `j` as a JSON document (2-space indent, a trailing newline) that is safe to print: bytes that
// are not UTF-8 become U+FFFD (rather than an exception), DEL and C1 controls \u escapes.
std::string jsonDocument(const Json &j);

// Writes DESIGN.md's `evaluate --json` object. The link list goes out row by row as it is
// written, never held whole: every link of a 262,144-GPU cluster streams in constant memory.
// Needs `evaluation.links` unless options.links is None. With options.timeline, `timeline`
// follows the links: every phase with the bytes it puts on each link, streamed the same way.
void writeEvaluationJson(std::ostream &out,
                         const Evaluation &evaluation,
                         const Topology &topology,
                         const ReportOptions &options);
// The same for people: the numbers, the per-tier summary, the busiest links (or every link),
// the warnings.
void writeEvaluationText(std::ostream &out,
                         const Evaluation &evaluation,
                         const Topology &topology,
                         const ReportOptions &options);

// The same as a Markdown document for a design review: a table of the numbers, the exposed
// seconds, the per-tier summary, the busiest links (or every link) and the warnings. Text from
// the layout (the title, names, messages) goes through markdownText(): it renders as written,
// never breaks a table and never opens an HTML tag.
void writeEvaluationMarkdown(std::ostream &out,
                             const Evaluation &evaluation,
                             const Topology &topology,
                             const ReportOptions &options);

// The per-link loads as CSV (RFC 4180, comma-separated, a header row; a name that a spreadsheet
// would run as a formula is prefixed with ', see appendCsvText()): one row per link with
// traffic (every link, idle ones too, with `allLinks`), in link order. Columns: id, name, kind, tier,
// bytes_per_step, bytes_up, bytes_down, utilization, peak_utilization, and utilization_at when
// `at` >= 0 (see ReportOptions::at). Streams row by row. Needs `evaluation.links`.
void writeLinkLoadsCsv(std::ostream &out,
                       const Evaluation &evaluation,
                       const Topology &topology,
                       bool allLinks = false,
                       double at = -1);

} // namespace railyard::engine
