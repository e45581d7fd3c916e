#include "planner/plannerpatterns.h"

#include <algorithm>
#include <chrono>
#include <numeric>

namespace railyard::engine {

namespace {
// Traffic is linear in the bytes: measure it once at a size floats hold well.
constexpr double kProbeBytes = 1e9;
} // namespace

CollectivePatterns::CollectivePatterns(const Topology &topology, PatternGroups groups)
    : m_topology(topology)
    , m_groups(groups)
{
    m_rates.fill(topology);
    m_traffic.bind(topology, m_rates);
    m_scratch.bind(topology, m_rates);
    // Both only time phases (no step totals).
    m_traffic.keepStepTotals(false);
    m_scratch.keepStepTotals(false);
    m_period = groups == PatternGroups::All ? 0 : periodGpus();
    m_railsAlike = groups == PatternGroups::Symmetric ? -1 : 0;
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

bool CollectivePatterns::railsAlike() const
{
    // Rail j (local GPU j of every server, its NICs, their leaves) must be rail 0 moved over:
    // the same rates everywhere, leaves that hold one rail each, matched one to one, and no
    // link two rails share (a core above pods, PCIe between GPUs, a direct NVLink mesh).
    const Topology &t = m_topology;
    const ClusterShape &s = t.shape();
    if (s.explicitServer || s.directNvlink || s.pcieOnly || s.gpusPerNic != 1 || s.nicsPerGpu < 1
        || s.gpusPerNode < 2 || (s.fabric == FabricKind::ThreeTier))
        return false;
    const auto &links = t.links();
    const auto rate = [&](int l) { return l < 0 ? -1.0 : links[std::size_t(l)].effectiveGbPerS(); };
    const int leaves = t.countOf(DeviceKind::Leaf);
    std::vector<int> railOfLeaf(static_cast<std::size_t>(leaves), -1);
    // Per rail, rail 0's leaf -> this rail's leaf, and back.
    std::vector<int> toRail(static_cast<std::size_t>(leaves) * s.gpusPerNode, -1);
    std::vector<int> fromRail(toRail.size(), -1);
    // The topology repeats every period (when it has one): its first says for all.
    const int gpus = m_period > 0 ? m_period : t.gpuCount();
    for (int g = 0; g < gpus; ++g) {
        const int local = t.localOfGpu(g), g0 = g - local;
        if (t.gpuNvlinkRate(g) != t.gpuNvlinkRate(g0) || t.gpuIntraRate(g) != t.gpuIntraRate(g0)
            || t.gpuNetRate(g) != t.gpuNetRate(g0)
            || t.localDomainOfGpu(g) != t.localDomainOfGpu(g0)
            || rate(t.gpuHostLink(g)) != rate(t.gpuHostLink(g0)))
            return false;
        const auto nics = t.gpuNics(g), nics0 = t.gpuNics(g0);
        if (nics.size() != nics0.size())
            return false;
        for (std::size_t k = 0; k < nics.size(); ++k) {
            const int a = nics[k] - t.nicDevice(0), b = nics0[k] - t.nicDevice(0);
            if (t.nicRate(a) != t.nicRate(b) || rate(t.nicHostLink(a)) != rate(t.nicHostLink(b))
                || rate(t.nicUplink(a)) != rate(t.nicUplink(b)))
                return false;
            const int la = t.leafOfNic(a), lb = t.leafOfNic(b);
            if ((la < 0) != (lb < 0))
                return false;
            if (la < 0)
                continue;
            int &rail = railOfLeaf[static_cast<std::size_t>(la)];
            if (rail != -1 && rail != local)
                return false; // a leaf holding two rails
            rail = local;
            int &to = toRail[static_cast<std::size_t>(lb) * s.gpusPerNode + local];
            int &from = fromRail[static_cast<std::size_t>(la) * s.gpusPerNode + local];
            if ((to != -1 && to != la) || (from != -1 && from != lb))
                return false;
            to = la;
            from = lb;
            const auto ups = t.leafUplinks(la), ups0 = t.leafUplinks(lb);
            if (ups.size() != ups0.size())
                return false;
            for (std::size_t u = 0; u < ups.size(); ++u)
                if (rate(ups[u]) != rate(ups0[u])
                    || links[std::size_t(ups[u])].lanes != links[std::size_t(ups0[u])].lanes)
                    return false;
        }
    }
    return true;
}

const std::vector<std::uint8_t> &CollectivePatterns::firstPeriodLinks()
{
    // What the traffic model writes for a GPU: its NVLinks, its host link, its NICs' host links
    // and uplinks, their leaves' uplinks to the spine. A period holds whole servers and
    // leaves, so these are the links no GPU outside it reaches but through a GPU inside.
    if (!m_firstPeriodLinks.empty())
        return m_firstPeriodLinks;
    const Topology &t = m_topology;
    m_firstPeriodLinks.assign(static_cast<std::size_t>(t.linkCount()), 0);
    const auto mark = [&](int l) {
        if (l >= 0)
            m_firstPeriodLinks[static_cast<std::size_t>(l)] = 1;
    };
    for (int g = 0; g < m_period; ++g) {
        for (int l : t.gpuNvlinks(g))
            mark(l);
        for (int d = t.gpuDevice(g); t.hostLink(d) >= 0; d = t.otherEnd(t.hostLink(d), d))
            mark(t.hostLink(d)); // up its PCIe tree
        mark(t.gpuHostLink(g));
        for (int nicDevice : t.gpuNics(g)) {
            const int nic = nicDevice - t.nicDevice(0);
            mark(t.nicHostLink(nic));
            mark(t.nicUplink(nic));
            const int leaf = t.leafOfNic(nic);
            if (leaf < 0)
                continue;
            for (int l : t.leafUplinks(leaf))
                mark(l);
            // Three tiers: the pod's spines' links to the core.
            const ClusterShape &s = t.shape();
            if (s.fabric == FabricKind::ThreeTier && s.cores > 0 && s.leavesPerPod > 0)
                for (int k = 0; k < s.spinesPerPod; ++k)
                    for (int l : t.spineUplinks(leaf / s.leavesPerPod * s.spinesPerPod + k))
                        mark(l);
        }
    }
    return m_firstPeriodLinks;
}

int CollectivePatterns::classify(Pattern &p, int base)
{
    m_members.resize(static_cast<std::size_t>(p.n));
    for (int i = 0; i < p.n; ++i)
        m_members[static_cast<std::size_t>(i)] = base + i * p.stride;
    analyzeGroup(m_topology, m_members, m_shape);
    // Groups whose shapes match share one plan, as in the evaluation's plan cache.
    std::size_t c = 0;
    for (; c < p.classes.size(); ++c) {
        const Class &k = p.classes[c];
        if (k.n == m_shape.n && k.domains == m_shape.domains && k.ppn == m_shape.ppn
            && k.ppnMin == m_shape.ppnMin && k.nics == m_shape.nicsPerDomain
            && k.intra == m_shape.intraGBps && k.net == m_shape.netPerDomainGBps)
            break;
    }
    if (c == p.classes.size()) {
        Class k;
        k.curve = collectiveCurve(m_topology,
                                  m_shape,
                                  p.op,
                                  Algorithm::Auto,
                                  m_scratch,
                                  p.dispatchScale);
        k.n = m_shape.n;
        k.domains = m_shape.domains;
        k.ppn = m_shape.ppn;
        k.ppnMin = m_shape.ppnMin;
        k.nics = m_shape.nicsPerDomain;
        k.intra = m_shape.intraGBps;
        k.net = m_shape.netPerDomainGBps;
        p.classes.push_back(k);
    }
    p.maxDomains = std::max(p.maxDomains, m_shape.domains);
    return static_cast<int>(c);
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
    if (deepEp && op == CollectiveOp::AllToAll) {
        m_members.resize(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i)
            m_members[static_cast<std::size_t>(i)] = i * stride;
        analyzeGroup(m_topology, m_members, m_shape);
        p.dispatchScale = deepEpDispatchScale(*deepEp, m_shape.domains);
    }
    // Groups of n ranks at stride s tile the ranks in blocks of n x s; in each block the groups
    // start at its first s ranks. Rank r runs on GPU r. A phase's time is its busiest link's,
    // and the groups and the topology repeat, so most groups need not be priced:
    // - Groups are translates of one another, and so is the topology every `m_period` GPUs
    //   (its leaves, pods and their uplinks belong to one period). When whole blocks tile a
    //   window of whole periods smaller than the cluster, the window's groups have the busiest
    //   link's load.
    // - When one block spans the cluster, group x is the GPUs equal to x modulo s, and moving
    //   every GPU by a period maps the groups onto themselves (each rotated by whole NVLink
    //   domains): the loads repeat every period. The groups with a rank in the first period
    //   (x below it) put every byte there is on its links; their busiest is the busiest of
    //   all, for the algorithms whose traffic a rotation does not change (linksFor()). A
    //   group's shape is also that of x + period modulo s: classes repeat every gcd(period, s).
    // - When every rail is rail 0 moved over (railsAlike()), the groups of other rails are
    //   copies on links of their own: with s a multiple of the server's GPUs a group keeps to
    //   one rail, and rail 0's groups (x a multiple of the server's GPUs) stand for all; with
    //   s dividing them, group x + 1 is group x one rail over (its members in each server
    //   rotated alike), and group 0 stands for the block's.
    const int world = m_topology.gpuCount();
    const int gpn = std::max(1, m_topology.shape().gpusPerNode);
    const long long block = 1LL * n * stride;
    int step = stride % gpn == 0 ? gpn : gpn % stride == 0 ? stride : 1;
    if (step > 1 && m_railsAlike < 0)
        m_railsAlike = railsAlike() ? 1 : 0;
    p.rails = step > 1 && m_railsAlike == 1;
    if (!p.rails)
        step = 1;
    p.railStep = step;
    long long window = world;
    if (m_period > 0) {
        const long long w = std::lcm(block, 1LL * m_period);
        if (w < world && world % w == 0)
            window = w;
    }
    if (m_groups == PatternGroups::Symmetric && window == world && block == world && m_period > 0
        && stride > m_period) {
        p.spanning = true;
        const int period = std::gcd(m_period, stride);
        p.residue.assign(static_cast<std::size_t>(period), -1);
        for (int x = 0; x < period; ++x)
            p.residue[static_cast<std::size_t>(x)] = x % step == 0
                                                             ? classify(p, x)
                                                             : p.residue[std::size_t(x - x % step)];
        for (int x = 0; x < m_period; x += step) {
            p.bases.push_back(x);
            p.classOfGroup.push_back(p.residue[static_cast<std::size_t>(x % period)]);
        }
    } else {
        for (long long b = 0; b + block <= window; b += block)
            for (int j = 0; j < stride; j += step) {
                const int base = static_cast<int>(b) + j;
                p.bases.push_back(base);
                p.classOfGroup.push_back(classify(p, base));
            }
    }
    // One group priced, alone or with copies on other rails' links: its time alone.
    p.single = m_groups == PatternGroups::Symmetric && !p.spanning && p.bases.size() == 1
               && p.classes.size() == 1;
    const int index = static_cast<int>(m_patterns.size());
    m_patterns.push_back(std::move(p));
    m_index.emplace(key, index);
    m_buildS += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return index;
}

namespace {

// Whether a group's traffic under `a` stays the same when its domains are rotated (the first
// becomes the last): rings, pairwise and per-member traffic do; a tree across domains does not.
bool rotationFree(Algorithm a, int domains)
{
    switch (a) {
    case Algorithm::Ring:
    case Algorithm::FlatRing:
    case Algorithm::P2p:
    case Algorithm::Hierarchical:
    case Algorithm::Sharp:
    case Algorithm::Direct: return true;
    default: return domains <= 1;
    }
}

} // namespace

const CollectivePatterns::Pattern::Links &CollectivePatterns::linksFor(
        Pattern &p, const std::array<Algorithm, 4> &algorithms)
{
    for (const Pattern::Links &l : p.links)
        if (l.algorithms == algorithms)
            return l;
    const auto start = std::chrono::steady_clock::now();
    const auto algorithmOf = [&](int c) { return algorithms[std::size_t(std::min(c, 3))]; };
    bool firstPeriod = p.spanning;
    for (std::size_t c = 0; c < p.classes.size() && firstPeriod; ++c)
        firstPeriod = rotationFree(algorithmOf(int(c)), p.classes[c].domains);
    // Every group's bytes on the links at once: groups that share links slow each other down.
    m_traffic.beginPhase(1.0);
    const auto add = [&](int base, int c) {
        m_members.resize(static_cast<std::size_t>(p.n));
        for (int i = 0; i < p.n; ++i)
            m_members[static_cast<std::size_t>(i)] = base + i * p.stride;
        analyzeGroup(m_topology, m_members, m_shape);
        ++m_groupsPriced;
        addCollectiveTraffic(m_traffic,
                             m_topology,
                             m_shape,
                             p.op,
                             algorithmOf(c),
                             kProbeBytes,
                             p.dispatchScale);
    };
    if (firstPeriod || !p.spanning) {
        for (std::size_t g = 0; g < p.bases.size(); ++g)
            add(p.bases[g], p.classOfGroup[g]);
    } else {
        // A tree across domains: every group (of rail 0).
        const int step = p.rails ? p.railStep : 1;
        const int period = static_cast<int>(p.residue.size());
        for (int x = 0; x < p.stride; x += step)
            add(x, p.residue[static_cast<std::size_t>(x % period)]);
    }
    m_traffic.phaseTime();
    double nvS = m_traffic.phaseNvlinkTime(), netS = m_traffic.phaseOtherTime();
    if (firstPeriod)
        m_traffic.phaseTimesWithin(firstPeriodLinks(), m_period, nvS, netS);
    Pattern::Links l;
    l.algorithms = algorithms;
    l.nvPerByte = nvS / kProbeBytes;
    l.netPerByte = netS / kProbeBytes;
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
    int bwIndex = 0;
    const std::size_t classes = std::min<std::size_t>(p.classes.size(), 4);
    for (std::size_t c = 0; c < classes; ++c) {
        const CollectiveCurve &curve = p.classes[c].curve;
        const int k = chooseCandidate(curve, bytes);
        if (k < 0)
            return {};
        const CollectiveCandidate &cand = curve.candidate[static_cast<std::size_t>(k)];
        worstLat = std::max(worstLat, candidateLatency(curve, cand, bytes));
        worstEff = std::min(worstEff, cand.efficiency);
        if (const double at = capAt(curve, cand, bytes, cand.capBusGBps); at > 0)
            cap = cap > 0 ? std::min(cap, at) : at;
        nvScale = std::min(nvScale, cand.nvlinkScale);
        algorithms[c] = cand.algorithm;
        if (c == 0)
            bwIndex = cand.bwIndex;
    }
    const Algorithm first = algorithms[static_cast<std::size_t>(
            std::min(p.classOfGroup.empty() ? 0 : p.classOfGroup.front(), 3))];
    double linkS = 0, nvlinkS = 0, networkS = 0;
    if (p.single) {
        // One group in the window: its traffic with every group's is its traffic alone, which
        // its curve measured (stageTime() is linear in the bytes).
        const CollectiveCurve &curve = p.classes.front().curve;
        linkS = curve.bwPerByte[std::size_t(bwIndex)] * bytes;
        nvlinkS = curve.nvlinkPerByte[std::size_t(bwIndex)] * bytes;
        networkS = curve.networkPerByte[std::size_t(bwIndex)] * bytes;
    } else {
        const Pattern::Links &links = linksFor(p, algorithms);
        linkS = stageTime(links.nvPerByte * bytes / nvScale,
                          links.netPerByte * bytes,
                          first,
                          p.maxDomains);
        nvlinkS = links.nvPerByte * bytes;
        networkS = links.netPerByte * bytes;
    }
    CollectiveCost cost = groupsCost(p.op, p.n, bytes, linkS, worstLat, worstEff, cap, first);
    cost.nvlinkBusyS = nvlinkS;
    cost.networkBusyS = networkS;
    return cost;
}

} // namespace railyard::engine
