#pragma once

// The planner's collective costs: one entry per (collective, group pattern) with the default
// placement, where every group of a dimension is an arithmetic progression of ranks (size n,
// stride s) and rank r runs on GPU r. Built once, with the full evaluation's own machinery
// (analyzeGroup, collectiveCurve, the traffic of every group at once), then priced at any size
// with arithmetic alone.

#include "collectives/collective.h"
#include "collectives/traffic.h"
#include "step/stepcost.h"
#include "topology/topology.h"

#include <array>
#include <memory>
#include <unordered_map>
#include <vector>

namespace railyard::engine {

// Which groups a pattern prices to find its busiest link (each reaches the same numbers).
enum class PatternGroups {
    All,       // every group of the cluster, as the evaluation does
    Periods,   // the groups of the first whole periods of the topology that tile with them
    Symmetric, // also one period of groups spanning the cluster, and one rail of identical ones
};

class CollectivePatterns
{
public:
    explicit CollectivePatterns(const Topology &topology,
                                PatternGroups groups = PatternGroups::Symmetric);
    ~CollectivePatterns();

    // The pattern of `op` on groups of `n` ranks at stride `stride` (tiling every GPU); `deepEp`
    // with the model for DeepEP's dispatch scale (all-to-all only). Returns its index.
    int find(CollectiveOp op, int n, int stride, const ModelDims *deepEp = nullptr);
    // All of the pattern's groups running `bytes` at once: what the full evaluation's
    // StepModel::price gives with the default placement.
    CollectiveCost price(int pattern, double bytes);

    std::size_t size() const { return m_patterns.size(); }
    double buildSeconds() const { return m_buildS; } // time spent building patterns
    // Groups whose traffic was put on the links so far (what building patterns takes).
    std::size_t groupsPriced() const { return m_groupsPriced; }

private:
    struct Class // groups whose shapes price alike (the evaluation's plan cache key)
    {
        CollectiveCurve curve;
        int n = 0, domains = 0, ppn = 0, ppnMin = 0, nics = 0;
        double intra = 0, net = 0;
    };
    struct Pattern
    {
        CollectiveOp op = CollectiveOp::AllReduce;
        int n = 0, stride = 0;
        double dispatchScale = 1;
        std::vector<Class> classes;
        // The groups priced (their first ranks), in the order the evaluation walks them, and
        // their classes. See find() for which groups stand for the others.
        std::vector<int> bases;
        std::vector<int> classOfGroup;
        // Groups spanning the cluster (see find()): `bases` are those with a rank in the first
        // period, `residue` the class of group x at x mod its size; `rails`: one rail's only.
        bool spanning = false;
        bool rails = false;
        int railStep = 1;    // the groups priced are those x a multiple of it
        bool single = false; // one group in all: its curve has its links' time
        std::vector<int> residue;
        int maxDomains = 0;
        // Link-bound seconds per byte of every group at once, NVLink and other links apart, for
        // each choice of algorithm per class (usually one class: one entry per algorithm).
        struct Links
        {
            std::array<Algorithm, 4> algorithms{};
            double nvPerByte = 0, netPerByte = 0;
        };
        std::vector<Links> links;
    };
    const Pattern::Links &linksFor(Pattern &p, const std::array<Algorithm, 4> &algorithms);
    // Analyzes the group at `base` into m_shape and returns its class (adding one if new).
    int classify(Pattern &p, int base);

    // The GPUs after which the topology repeats (a scalable unit or pod, whole NVLink domains
    // and servers); 0 if it does not (a partial last unit, one switch).
    int periodGpus() const;
    // Whether every rail (a GPU's position in its server, with its NICs and their leaves) is
    // a copy of rail 0 with links of its own (see find()).
    bool railsAlike() const;
    // The links whose loads only groups with a rank in the first period reach (see find()).
    const std::vector<std::uint8_t> &firstPeriodLinks();

    const Topology &m_topology;
    PatternGroups m_groups;
    int m_period = 0;
    int m_railsAlike = -1; // railsAlike(), once asked (-1: not yet)
    std::vector<std::uint8_t> m_firstPeriodLinks;
    LinkRates m_rates; // shared by the two below
    LinkTraffic m_traffic;
    LinkTraffic m_scratch;
    GroupShape m_shape;
    std::vector<int> m_members;
    std::vector<Pattern> m_patterns;
    std::unordered_map<std::uint64_t, int> m_index;
    double m_buildS = 0;
    std::size_t m_groupsPriced = 0;
};

} // namespace railyard::engine
