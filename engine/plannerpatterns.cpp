#include "plannerpatterns.h"

#include <algorithm>
#include <chrono>
#include <numeric>

namespace railyard::engine {

namespace {
// Traffic is linear in the bytes: measure it once at a size floats hold well.
constexpr double kProbeBytes = 1e9;
} // namespace

CollectivePatterns::CollectivePatterns(const Topology &topology)
    : m_topology(topology)
    , m_traffic(topology)
    , m_scratch(topology)
{
    m_period = periodGpus();
}

int CollectivePatterns::periodGpus() const
{
    const ClusterShape &s = m_topology.shape();
    const int world = m_topology.gpuCount();
    int unit = 0;
    if (!s.hasFabric) {
        unit = s.gpusPerNode;
    } else if (s.fabric == FabricKind::RailOptimized && s.nodesPerLeafGroup > 0
               && s.nodes % s.nodesPerLeafGroup == 0) {
        unit = s.nodesPerLeafGroup * s.gpusPerNode;
    } else if (s.fabric == FabricKind::ThreeTier && s.leavesPerPod > 0 && s.nicsPerLeaf > 0) {
        const int nics = m_topology.nicCount();
        const long long podNics = 1LL * s.nicsPerLeaf * s.leavesPerPod;
        if (nics % podNics == 0 && (podNics * world) % nics == 0)
            unit = static_cast<int>(podNics * world / nics);
    }
    if (unit <= 0)
        return 0;
    unit = std::lcm(unit, std::lcm(std::max(1, s.domainSize), std::max(1, s.gpusPerNode)));
    return world % unit == 0 ? unit : 0;
}

CollectivePatterns::~CollectivePatterns() = default;

template<class F>
void CollectivePatterns::forEachGroup(const Pattern &p, F &&f) const
{
    // Groups of n ranks at stride s tile the ranks in blocks of n x s: in each block, the
    // groups start at its first s ranks. Rank r runs on GPU r.
    const int block = p.n * p.stride;
    int index = 0;
    for (int b = 0; b + block <= p.window; b += block)
        for (int j = 0; j < p.stride; ++j)
            f(index++, b + j);
}

int CollectivePatterns::find(CollectiveOp op, int n, int stride, const ModelDims *deepEp)
{
    // A reduce-scatter is an all-gather backwards: the same candidates, latencies and bytes on
    // every link (ring only), so the two share a pattern.
    if (op == CollectiveOp::ReduceScatter)
        op = CollectiveOp::AllGather;
    const std::uint64_t key = std::uint64_t(static_cast<int>(op)) | std::uint64_t(n) << 4
                              | std::uint64_t(stride) << 24 | std::uint64_t(deepEp ? 1 : 0) << 44;
    if (const auto it = m_index.find(key); it != m_index.end())
        return it->second;
    const auto start = std::chrono::steady_clock::now();
    Pattern p;
    p.op = op;
    p.n = n;
    p.stride = stride;
    // Groups are translates of one another, and so is the topology every `m_period` GPUs: its
    // leaves, pods and their uplinks belong to one period, and a phase's time is its busiest
    // link's. The first whole number of periods and group blocks has that link's load, so only
    // the groups there are priced.
    const int world = m_topology.gpuCount();
    p.window = world;
    if (m_period > 0) {
        const long long window = std::lcm(1LL * n * stride, 1LL * m_period);
        if (window < world && world % window == 0)
            p.window = static_cast<int>(window);
    }
    m_members.resize(static_cast<std::size_t>(n));
    const auto membersOf = [&](int base) {
        for (int i = 0; i < n; ++i)
            m_members[static_cast<std::size_t>(i)] = base + i * stride;
        analyzeGroup(m_topology, m_members, m_shape);
    };
    if (deepEp && op == CollectiveOp::AllToAll) {
        membersOf(0);
        p.dispatchScale = deepEpDispatchScale(*deepEp, m_shape.domains);
    }
    // Groups whose shapes match share one plan, as in the evaluation's plan cache.
    struct Key
    {
        int n, domains, ppn, ppnMin, nics;
        double intra, net;
        bool operator==(const Key &) const = default;
    };
    std::vector<Key> keys;
    forEachGroup(p, [&](int, int base) {
        membersOf(base);
        const Key k{m_shape.n,
                    m_shape.domains,
                    m_shape.ppn,
                    m_shape.ppnMin,
                    m_shape.nicsPerDomain,
                    m_shape.intraGBps,
                    m_shape.netPerDomainGBps};
        std::size_t c = 0;
        while (c < keys.size() && !(keys[c] == k))
            ++c;
        if (c == keys.size()) {
            keys.push_back(k);
            p.classes.push_back({collectiveCurve(m_topology,
                                                 m_shape,
                                                 op,
                                                 Algorithm::Auto,
                                                 m_scratch,
                                                 p.dispatchScale),
                                 m_shape.domains});
        }
        p.classOfGroup.push_back(static_cast<int>(c));
        p.maxDomains = std::max(p.maxDomains, m_shape.domains);
    });
    const int index = static_cast<int>(m_patterns.size());
    m_patterns.push_back(std::move(p));
    m_index.emplace(key, index);
    m_buildS += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return index;
}

const CollectivePatterns::Pattern::Links &CollectivePatterns::linksFor(
        Pattern &p, const std::array<Algorithm, 4> &algorithms)
{
    for (const Pattern::Links &l : p.links)
        if (l.algorithms == algorithms)
            return l;
    const auto start = std::chrono::steady_clock::now();
    // Every group's bytes on the links at once: groups that share links slow each other down.
    m_traffic.beginPhase(1.0);
    forEachGroup(p, [&](int g, int base) {
        m_members.resize(static_cast<std::size_t>(p.n));
        for (int i = 0; i < p.n; ++i)
            m_members[static_cast<std::size_t>(i)] = base + i * p.stride;
        analyzeGroup(m_topology, m_members, m_shape);
        const int c = p.classOfGroup[static_cast<std::size_t>(g)];
        addCollectiveTraffic(m_traffic,
                             m_topology,
                             m_shape,
                             p.op,
                             algorithms[static_cast<std::size_t>(std::min(c, 3))],
                             kProbeBytes,
                             p.dispatchScale);
    });
    m_traffic.phaseTime();
    Pattern::Links l;
    l.algorithms = algorithms;
    l.nvPerByte = m_traffic.phaseNvlinkTime() / kProbeBytes;
    l.netPerByte = m_traffic.phaseOtherTime() / kProbeBytes;
    p.links.push_back(l);
    m_buildS += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return p.links.back();
}

CollectiveCost CollectivePatterns::price(int index, double bytes)
{
    if (index < 0 || bytes <= 0)
        return {};
    Pattern &p = m_patterns[static_cast<std::size_t>(index)];
    double worstLat = 0, worstEff = 1, cap = 0, nvScale = 1;
    std::array<Algorithm, 4> algorithms{};
    const std::size_t classes = std::min<std::size_t>(p.classes.size(), 4);
    for (std::size_t c = 0; c < classes; ++c) {
        const CollectiveCurve &curve = p.classes[c].curve;
        const int k = chooseCandidate(curve, bytes);
        if (k < 0)
            return {};
        const CollectiveCandidate &cand = curve.candidate[static_cast<std::size_t>(k)];
        worstLat = std::max(worstLat, candidateLatency(curve, cand, bytes));
        worstEff = std::min(worstEff, cand.efficiency);
        if (cand.capBusGBps > 0)
            cap = cap > 0 ? std::min(cap, cand.capBusGBps) : cand.capBusGBps;
        nvScale = std::min(nvScale, cand.nvlinkScale);
        algorithms[c] = cand.algorithm;
    }
    const Pattern::Links &links = linksFor(p, algorithms);
    const Algorithm first = algorithms[static_cast<std::size_t>(
            std::min(p.classOfGroup.empty() ? 0 : p.classOfGroup.front(), 3))];
    const double linkS = stageTime(links.nvPerByte * bytes / nvScale,
                                   links.netPerByte * bytes,
                                   first,
                                   p.maxDomains);
    return groupsCost(p.op, p.n, bytes, linkS, worstLat, worstEff, cap, first);
}

} // namespace railyard::engine
