#include "collectives/concurrentcollective.h"

#include "base/inputerror.h"
#include "collectives/traffic.h"

#include <algorithm>

namespace railyard::engine {

CollectiveResult estimateConcurrentCollective(const Topology &t,
                                              CollectiveOp op,
                                              double bytes,
                                              const std::vector<std::vector<int>> &groups)
{
    if (groups.empty())
        throw InputError("concurrent collective: expected at least one group");
    if (bytes <= 0)
        throw InputError("the message size must be positive");
    const std::size_t n = groups.front().size();
    if (n < 2)
        throw InputError("a collective needs at least two GPUs, got " + std::to_string(n));
    for (const auto &g : groups)
        if (g.size() != n)
            throw InputError("concurrent collective: groups of " + std::to_string(n) + " and "
                             + std::to_string(g.size()) + " GPUs; expected equal groups");

    // As the step model prices a dimension (engine/stepcomm.cpp): plan each group alone, then
    // load every group's bytes together and take the busiest link.
    LinkTraffic planning(t), traffic(t);
    traffic.beginPhase(1.0);
    CollectiveResult r;
    r.op = op;
    r.bytes = bytes;
    r.ranks = static_cast<int>(n);
    double nvScale = 1, worstEff = 1, worstLatency = 0, cap = 0;
    bool first = true;
    for (const auto &members : groups) {
        const GroupShape g = analyzeGroup(t, members);
        const CollectivePlan p = planCollective(t, g, op, bytes, Algorithm::Auto, planning);
        if (first) {
            r.algorithm = p.algorithm;
            r.protocol = p.protocol;
            first = false;
        }
        r.domains = std::max(r.domains, g.domains);
        nvScale = std::min(nvScale, p.nvlinkScale);
        worstEff = std::min(worstEff, p.efficiency);
        worstLatency = std::max(worstLatency, p.latencyS);
        if (p.capBusGBps > 0)
            cap = cap > 0 ? std::min(cap, p.capBusGBps) : p.capBusGBps;
        addCollectiveTraffic(traffic, t, g, op, p.algorithm, bytes);
    }
    traffic.setKindScale(LinkKind::NvLink, nvScale);
    traffic.phaseTime();
    double bwTime = stageTime(traffic, r.algorithm, r.domains) / worstEff;
    const double factor = busBandwidthFactor(op, static_cast<int>(n));
    if (cap > 0)
        bwTime = std::max(bwTime, factor * bytes / (cap * 1e9));
    r.latencyS = worstLatency;
    r.timeS = worstLatency + bwTime;
    r.algbwGBps = bytes / r.timeS / 1e9;
    r.busbwGBps = r.algbwGBps * factor;
    if (const int bl = traffic.phaseBottleneck(); bl >= 0) {
        const Link &l = t.links()[static_cast<std::size_t>(bl)];
        const DeviceKind ka = t.devices()[static_cast<std::size_t>(l.a)].kind;
        r.bottleneck = l.kind == LinkKind::NvLink ? "NVLink"
                       : ka == DeviceKind::Nic    ? "NIC"
                       : ka == DeviceKind::Leaf   ? "spine uplinks"
                       : ka == DeviceKind::Spine  ? "core uplinks"
                                                  : toString(l.kind);
        r.bottleneckGBps = l.effectiveGbPerS();
        if (ka == DeviceKind::Leaf) {
            const int leaf = t.devices()[static_cast<std::size_t>(l.a)].index;
            const double eff = traffic.uplinkEfficiency(leaf);
            if (eff < 1)
                r.notes.push_back("ECMP: the busiest spine uplink gets "
                                  + std::to_string(static_cast<int>(eff * 100 + 0.5))
                                  + "% of the leaf's fair share (flows collide)");
        }
    }
    r.notes.push_back(std::to_string(groups.size()) + " groups at once");
    return r;
}

} // namespace railyard::engine
