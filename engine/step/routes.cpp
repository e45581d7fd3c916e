#include "step/routes.h"

#include "collectives/collective.h"
#include "collectives/traffic.h"
#include "step/evaluate.h"
#include "step/timeline.h"

#include <algorithm>

namespace railyard::engine {

namespace {

// The links one all-reduce over `gpus` puts bytes on, unsorted, in `traffic`'s next phase: in
// one domain a ring (every member's NVLinks or PCIe path); across domains hierarchically, so
// that every member's NIC carries its share.
std::vector<int> routeGroup(LinkTraffic &traffic, const Topology &t, std::span<const int> gpus)
{
    if (gpus.size() < 2)
        return {};
    GroupShape g;
    analyzeGroup(t, gpus, g);
    const Algorithm algo = g.domains > 1 && !g.pcieOnly ? Algorithm::Hierarchical : Algorithm::Ring;
    traffic.beginPhase();
    addCollectiveTraffic(traffic, t, g, CollectiveOp::AllReduce, algo, 1e9);
    traffic.phaseTime();
    return traffic.phaseLinks();
}

} // namespace

std::vector<int> groupTrafficLinks(const Topology &t,
                                   std::span<const int> gpus,
                                   const LinkLoads *loads)
{
    std::vector<int> out;
    if (gpus.size() < 2)
        return out;
    LinkTraffic traffic(t);
    out = routeGroup(traffic, t, gpus);
    if (loads)
        std::erase_if(out, [&](int l) {
            const std::size_t i = static_cast<std::size_t>(l);
            return i < loads->size() && loads->utilization[i] <= 0;
        });
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

namespace {

// Switch tiers from the GPUs up: devices inside servers, leaves, spines, cores.
int tierOf(DeviceKind kind)
{
    switch (kind) {
    case DeviceKind::Leaf: return 1;
    case DeviceKind::Spine: return 2;
    case DeviceKind::Core: return 3;
    default: return 0;
    }
}

// The GPUs below a link: reachable from its lower end(s) through devices of lower tiers (the
// same tier for devices inside servers and NVLink domains), without crossing the link.
std::vector<int> gpusBelow(const Topology &t, int link)
{
    const Link &l = t.links()[static_cast<std::size_t>(link)];
    const auto &devices = t.devices();
    const int ta = tierOf(devices[static_cast<std::size_t>(l.a)].kind);
    const int tb = tierOf(devices[static_cast<std::size_t>(l.b)].kind);
    const int low = std::min(ta, tb);
    std::vector<char> seen(devices.size(), 0);
    std::vector<int> stack;
    for (int end : {l.a, l.b})
        if (tierOf(devices[static_cast<std::size_t>(end)].kind) == low && !seen[std::size_t(end)]) {
            seen[static_cast<std::size_t>(end)] = 1;
            stack.push_back(end);
        }
    std::vector<int> gpus;
    while (!stack.empty()) {
        const int d = stack.back();
        stack.pop_back();
        if (devices[static_cast<std::size_t>(d)].kind == DeviceKind::Gpu)
            gpus.push_back(devices[static_cast<std::size_t>(d)].index);
        for (int via : t.linksOf(d)) {
            if (via == link)
                continue;
            const int next = t.otherEnd(via, d);
            const int tier = tierOf(devices[static_cast<std::size_t>(next)].kind);
            if (seen[static_cast<std::size_t>(next)] || tier > low || (low > 0 && tier == low))
                continue;
            seen[static_cast<std::size_t>(next)] = 1;
            stack.push_back(next);
        }
    }
    return gpus;
}

PhaseKind phaseKindOf(Dim d)
{
    switch (d) {
    case Dim::TP: return PhaseKind::Tp;
    case Dim::CP: return PhaseKind::Cp;
    case Dim::EP: return PhaseKind::Ep;
    case Dim::DP: return PhaseKind::Dp;
    case Dim::PP: return PhaseKind::PpP2p;
    }
    return PhaseKind::Tp;
}

} // namespace

std::vector<LinkCrossing> groupsCrossingLink(const Topology &t,
                                             const RankLayout &ranks,
                                             int link,
                                             const StepTimeline *timeline,
                                             const LinkLoads *loads)
{
    std::vector<LinkCrossing> out;
    if (link < 0 || link >= t.linkCount())
        return out;
    if (loads && static_cast<std::size_t>(link) < loads->size()
        && loads->utilization[static_cast<std::size_t>(link)] <= 0)
        return out;
    const unsigned kinds = timeline && !timeline->empty() ? kindsOnLink(*timeline, link) : ~0u;
    const std::vector<int> below = gpusBelow(t, link);
    LinkTraffic traffic(t);
    for (Dim d : {Dim::TP, Dim::CP, Dim::EP, Dim::DP, Dim::PP}) {
        if (ranks.size(d) <= 1 || !(kinds & (1u << static_cast<unsigned>(phaseKindOf(d)))))
            continue;
        std::vector<int> candidates;
        for (int gpu : below)
            if (const int rank = ranks.rankOfGpu(gpu); rank >= 0)
                candidates.push_back(ranks.groupOf(rank, d));
        std::sort(candidates.begin(), candidates.end());
        candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
        LinkCrossing crossing{d, {}};
        for (int g : candidates) {
            const std::vector<int> gpus = ranks.groupGpus(d, g);
            const std::vector<int> links = routeGroup(traffic, t, gpus);
            if (std::find(links.begin(), links.end(), link) != links.end())
                crossing.groups.push_back(g);
        }
        if (!crossing.groups.empty())
            out.push_back(std::move(crossing));
    }
    return out;
}

} // namespace railyard::engine
