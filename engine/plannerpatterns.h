#pragma once

// The planner's collective costs: one entry per (collective, group pattern) with the default
// placement, where every group of a dimension is an arithmetic progression of ranks (size n,
// stride s) and rank r runs on GPU r. Built once, with the full evaluation's own machinery
// (analyzeGroup, collectiveCurve, the traffic of every group at once), then priced at any size
// with arithmetic alone.

#include "collective.h"
#include "stepcost.h"
#include "topology.h"
#include "traffic.h"

#include <array>
#include <memory>
#include <unordered_map>
#include <vector>

namespace railyard::engine {

class CollectivePatterns
{
public:
    explicit CollectivePatterns(const Topology &topology);
    ~CollectivePatterns();

    // The pattern of `op` on groups of `n` ranks at stride `stride` (tiling every GPU); `deepEp`
    // with the model for DeepEP's dispatch scale (all-to-all only). Returns its index.
    int find(CollectiveOp op, int n, int stride, const ModelDims *deepEp = nullptr);
    // All of the pattern's groups running `bytes` at once: what the full evaluation's
    // StepModel::price gives with the default placement.
    CollectiveCost price(int pattern, double bytes);

    std::size_t size() const { return m_patterns.size(); }
    double buildSeconds() const { return m_buildS; } // time spent building patterns

private:
    struct Class // groups whose shapes price alike (the evaluation's plan cache key)
    {
        CollectiveCurve curve;
        int domains = 0;
    };
    struct Pattern
    {
        CollectiveOp op = CollectiveOp::AllReduce;
        int n = 0, stride = 0;
        double dispatchScale = 1;
        std::vector<Class> classes;
        std::vector<int> classOfGroup; // per group priced, in the order the evaluation walks them
        int window = 0; // the groups priced: those in the first `window` GPUs (see find())
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
    template<class F>
    void forEachGroup(const Pattern &p, F &&f) const;

    // The GPUs after which the topology repeats (a scalable unit or pod, whole NVLink domains
    // and servers); 0 if it does not (a partial last unit, one switch).
    int periodGpus() const;

    const Topology &m_topology;
    int m_period = 0;
    LinkTraffic m_traffic;
    LinkTraffic m_scratch;
    GroupShape m_shape;
    std::vector<int> m_members;
    std::vector<Pattern> m_patterns;
    std::unordered_map<std::uint64_t, int> m_index;
    double m_buildS = 0;
};

} // namespace railyard::engine
