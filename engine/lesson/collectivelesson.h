#pragma once

#include "collectives/collective.h"
#include "topology/topology.h"

#include <string>
#include <vector>

namespace railyard::engine {

// One collective, stepped chunk by chunk as the algorithm NCCL would run (or the one asked
// for) moves it over this topology: what every step sends, on which links, how long it takes,
// and the formula with the numbers filled in. A teaching view of estimateCollective(): each
// step is routed with the traffic model's own pieces (collectivetraffic.cpp), and the steps'
// durations plus the latency add up to the estimate's time.

struct LessonTransfer
{
    int from = -1; // device id: a GPU, or the NVSwitch / leaf that reduces in the network
    int to = -1;
    int fromRank = -1; // index into CollectiveLesson::gpus; -1 for a switch
    int toRank = -1;
    int chunk = 0;  // the first unit chunk moved (CollectiveLesson::chunks)
    int chunks = 1; // how many consecutive unit chunks
    double bytes = 0;
    bool reduce = false; // the receiver adds what it gets (else it keeps a copy)
};

struct LessonStep
{
    std::string text;     // "Step 3 of 14 - reduce-scatter: ..."
    std::string phase;    // "reduce-scatter", "tree up", ...
    bool network = false; // the step crosses the network (else NVLink / PCIe only)
    std::vector<LessonTransfer> transfers;
    int linkSet = -1;        // its bytes per link: CollectiveLesson::linkSets[linkSet]
    int bottleneckLink = -1; // the link that bounds the step alone
    double linkS = 0;        // the step alone: its busiest link's bytes over its achieved rate
    double timeS = 0;        // its share of the estimate's bandwidth time
    double startS = 0;       // when it starts, from the end of the latency
};

struct CollectiveLesson
{
    CollectiveOp op = CollectiveOp::AllReduce;
    Algorithm algorithm = Algorithm::Ring; // as run: Auto resolved, NVLS on domains -> NVLS-tree
    Protocol protocol = Protocol::Simple;
    double bytes = 0;
    int ranks = 0;
    int domains = 0;
    std::vector<int> gpus; // the GPUs in the order the algorithm uses (grouped by domain)
    int chunks = 0;        // unit chunks the data is cut into for the progress view
    double chunkBytes = 0;
    // Per rank, the unit chunk it starts with (all-gather; broadcast: the root's is -1, the
    // others' -2: nothing). Empty: every rank starts with its own copy of every chunk.
    std::vector<int> initialChunk;
    std::vector<LessonStep> steps;
    // Bytes per link (sorted by link, both directions), shared by steps of one pattern: every
    // step of a ring moves the same bytes over the same links.
    std::vector<std::vector<LinkBytes>> linkSets;
    std::string title;                // "ring all_reduce of 1 GiB on 8 GPUs (1 NVLink domain)"
    std::vector<std::string> formula; // lines, numbers filled in
    std::vector<std::string> notes;
    double stepsAloneS = 0; // sum of the steps' linkS
    double bandwidthS = 0;  // the estimate's bandwidth part (sum of the steps' timeS)
    double latencyS = 0;
    double totalS = 0;    // latencyS + bandwidthS
    double estimateS = 0; // estimateCollective()'s time for the same request
    // The seed article's textbook flat ring on the same GPUs in the same order (flatRing() at
    // the request's efficiency, else kSeedFlatRingEfficiency), shown beside the estimate: what
    // the formula says, against what NCCL achieves.
    CollectiveResult textbook;
    double textbookEfficiency = 0;
    double nvlinkScale = 1; // NVLS: the share of NVLink's rate the switch's reduction gets

    const std::vector<LinkBytes> &stepLinks(int step) const;
    // The bus bandwidth the lesson's collective reaches (NCCL's busbw): its bytes times the
    // bus factor of its op and ranks over totalS, in GB/s; 0 when nothing takes time.
    double busbwGBps() const;
};

// The achieved fraction the seed article's flat-ring numbers (0.068 s in one server, 0.694 s
// across 16) assume, the lesson's textbook ring's default: seed/interconnect-bottleneck-article.txt,
// "Estimating Communication Cost Before You Scale": "assuming 80% of link bandwidth is achieved"
// (its helper's `efficiency: float = 0.8`).
inline constexpr double kSeedFlatRingEfficiency = 0.8;

// The largest group a lesson steps through (every transfer of every step is listed).
inline constexpr int kLessonMaxRanks = 512;

// Throws InputError with a clear reason when the algorithm cannot run here (NVLS without NVLink
// SHARP, SHARP without a SHARP fabric, a tree inside one domain, ...) or the group is too large.
CollectiveLesson buildCollectiveLesson(const Topology &topology, const CollectiveRequest &request);

// The links step `step` crosses, with the share of the step each is busy: its busiest
// direction's bytes over its achieved rate (NVLS's NVLink efficiency included) and the step's
// own time, so the step's bottleneck is 1.
struct LessonLinkLoad
{
    int link = -1;
    double bytes = 0;     // the busiest direction's
    double load = 0;      // 0..1
    bool reverse = false; // more goes b -> a than a -> b
};
std::vector<LessonLinkLoad> lessonStepLoads(const Topology &topology,
                                            const CollectiveLesson &lesson,
                                            int step);

// What each GPU of the lesson holds after `stepsDone` steps: per rank (lesson.gpus order) and
// unit chunk, how many ranks' contributions it holds summed (0: not held).
struct LessonProgress
{
    int ranks = 0;
    int chunks = 0;
    int contributors = 0; // the count a finished chunk has (ranks for reductions, else 1)
    std::vector<int> count;
    int at(int rank, int chunk) const
    {
        return count[static_cast<std::size_t>(rank) * static_cast<std::size_t>(chunks)
                     + static_cast<std::size_t>(chunk)];
    }
    // The share of its final result a rank holds (0..1).
    double done(int rank, CollectiveOp op) const;
};
LessonProgress lessonProgress(const CollectiveLesson &lesson, int stepsDone);

} // namespace railyard::engine
