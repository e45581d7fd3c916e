#include "planner/defaultplan.h"

#include "base/units.h"
#include "layout/placement.h"
#include "layout/transformer.h"
#include "step/evaluate.h"
#include "step/memory.h"

#include <algorithm>

namespace railyard::engine {

namespace {

// The valid sizes of `dim` for `layout`'s other sizes, up to `most`, smallest first.
std::vector<int> validSizes(const Layout &layout, Dim dim, int most)
{
    std::vector<int> out;
    for (const SizeChoice &c : sizeChoices(layout, dim))
        if (c.valid && c.value <= most)
            out.push_back(c.value);
    return out;
}

class Search
{
public:
    Search(const Layout &layout, const Topology &topology)
        : m_base(layout)
        , m_topology(topology)
    {
        m_base.parallel = ParallelConfig{}; // the topology-aware order, DP derived
        m_base.mapping.clear();
        m_plan.parallel = m_base.parallel;
        m_plan.globalBatch = layout.training.globalBatch;
        m_plan.hbmGiB = usableHbmGiB(topology.gpuSpec()); // as the evaluation reads it
    }

    // Prices the sizes; true (and the plan taken) when the memory fits.
    bool tryPlan(int tp, int pp, int ep)
    {
        Layout l = m_base;
        l.parallel.tp = tp;
        l.parallel.pp = pp;
        l.parallel.ep = ep;
        const int dp = l.cluster.gpuCount() / (tp * pp);
        const int perStep = dp * std::max(1, l.training.microBatch);
        if (l.training.globalBatch % perStep != 0)
            l.training.globalBatch = (l.training.globalBatch / perStep + 1) * perStep;
        const Evaluation e = evaluate(l, m_topology, {.linkLoads = false, .timeline = false});
        ++m_plan.evaluated;
        if (!e.ok) {
            m_lastError = e.error;
            return false;
        }
        double memory = 0;
        for (double m : e.memoryGiBPerStage)
            memory = std::max(memory, m);
        const bool fits = memory <= e.hbmGiB;
        if (fits || !m_priced || memory < m_plan.memoryGiB) {
            m_plan.parallel = l.parallel;
            m_plan.globalBatch = l.training.globalBatch;
            m_plan.memoryGiB = memory;
            m_plan.fits = fits;
            m_priced = true;
        }
        return fits;
    }

    DefaultPlan finish(const ModelDims &model)
    {
        if (!m_plan.fits) {
            const int gpus = m_base.cluster.gpuCount();
            if (!m_priced)
                m_plan.reason = m_lastError;
            else
                m_plan.reason = model.name + " does not fit in the " + formatNumber(m_plan.hbmGiB)
                                + " GiB of HBM of " + std::to_string(gpus) + " "
                                + m_topology.gpuSpec().id
                                + " GPUs at any TP inside the NVLink "
                                  "domain and PP: it needs "
                                + formatNumber(m_plan.memoryGiB) + " GiB per GPU at TP "
                                + std::to_string(m_plan.parallel.tp) + ", PP "
                                + std::to_string(m_plan.parallel.pp)
                                + "; add servers or choose a smaller model";
        }
        return m_plan;
    }

    const Layout &base() const { return m_base; }
    DefaultPlan plan() const { return m_plan; }

private:
    Layout m_base;
    const Topology &m_topology;
    DefaultPlan m_plan;
    bool m_priced = false;
    std::string m_lastError;
};

} // namespace

DefaultPlan defaultPlan(const Layout &layout, const Topology &topology)
{
    Search search(layout, topology);
    if (!layout.model) {
        DefaultPlan plan = search.plan();
        plan.fits = true;
        return plan;
    }
    const ResolvedModel model = resolveModel(*layout.model);
    if (!model.error.empty()) {
        DefaultPlan plan = search.plan();
        plan.reason = model.error;
        return plan;
    }
    const int gpus = layout.cluster.gpuCount();
    const int domain = std::min(layout.cluster.nvlinkDomain, gpus);
    Layout probe = search.base();
    const auto expertSizes = [&](int tp, int pp) {
        if (!model.dims.isMoe())
            return std::vector<int>{1};
        probe.parallel.tp = tp;
        probe.parallel.pp = pp;
        return validSizes(probe, Dim::EP, gpus);
    };

    // TP inside the NVLink domain, smallest first, without pipelining.
    const std::vector<int> tps = validSizes(probe, Dim::TP, domain);
    for (int tp : tps)
        for (int ep : expertSizes(tp, 1))
            if (search.tryPlan(tp, 1, ep))
                return search.finish(model.dims);
    // Then the largest TP in the domain, and pipeline stages.
    const int tp = tps.empty() ? 1 : tps.back();
    probe.parallel.tp = tp;
    probe.parallel.ep = 1;
    for (int pp : validSizes(probe, Dim::PP, model.dims.layers)) {
        if (pp == 1)
            continue;
        for (int ep : expertSizes(tp, pp))
            if (search.tryPlan(tp, pp, ep))
                return search.finish(model.dims);
    }
    return search.finish(model.dims);
}

Layout withPlan(const Layout &layout, const DefaultPlan &plan)
{
    Layout l = layout;
    l.parallel = plan.parallel;
    l.training.globalBatch = plan.globalBatch;
    l.mapping.clear();
    return l;
}

} // namespace railyard::engine
