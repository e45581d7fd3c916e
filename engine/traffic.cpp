#include "traffic.h"

#include <algorithm>
#include <cmath>

namespace railyard::engine {

double ecmpEfficiency(double flows, double paths)
{
    if (flows <= 0 || paths <= 1)
        return 1.0;
    const double lambda = flows / paths;
    // E[max] of `paths` independent Poisson(lambda) loads (the balls-into-bins approximation):
    // sum over t >= 1 of P(max >= t) = 1 - P(X < t)^paths.
    double expectedMax = 0;
    double pmf = std::exp(-lambda); // P(X = 0)
    double cdf = pmf;               // P(X <= t - 1) while summing P(max >= t)
    for (int t = 1; t < 100000; ++t) {
        const double pMaxAtLeastT = 1.0 - std::pow(cdf, paths);
        expectedMax += pMaxAtLeastT;
        if (pMaxAtLeastT < 1e-9 && t > lambda)
            break;
        pmf *= lambda / t;
        cdf += pmf;
    }
    // A whole flow cannot be split: the busiest uplink carries at least ceil(lambda) flows.
    expectedMax = std::max(expectedMax, std::ceil(lambda - 1e-9));
    return std::min(1.0, lambda / expectedMax);
}

LinkTraffic::LinkTraffic(const Topology &t)
    : m_t(t)
{
    const std::size_t n = static_cast<std::size_t>(t.linkCount());
    m_up.assign(n, 0);
    m_down.assign(n, 0);
    m_stamp.assign(n, 0);
    m_totalUp.assign(n, 0);
    m_totalDown.assign(n, 0);
    const std::size_t leaves = static_cast<std::size_t>(t.countOf(DeviceKind::Leaf));
    m_leafUp.assign(leaves, 0);
    m_leafDown.assign(leaves, 0);
    m_leafFlowsUp.assign(leaves, 0);
    m_leafFlowsDown.assign(leaves, 0);
    m_leafStamp.assign(leaves, 0);
    m_leafEff.assign(leaves, 1.0);
    m_podUp.assign(static_cast<std::size_t>(std::max(1, t.shape().leafGroups)), 0);
    m_podDown.assign(m_podUp.size(), 0);
    m_adaptive = t.shape().adaptiveRouting;
    m_qps = t.shape().qpsPerConnection;
}

void LinkTraffic::beginPhase(double repeats)
{
    ++m_phase;
    m_repeats = repeats;
    m_touched.clear();
    m_touchedLeaves.clear();
    m_kindScale = {1, 1, 1, 1, 1};
    std::fill(m_podUp.begin(), m_podUp.end(), 0.0);
    std::fill(m_podDown.begin(), m_podDown.end(), 0.0);
    m_bottleneck = -1;
    m_spread = false;
}

void LinkTraffic::setKindScale(LinkKind kind, double scale)
{
    m_kindScale[static_cast<std::size_t>(kind)] = scale;
}

void LinkTraffic::touch(int link)
{
    const std::size_t l = static_cast<std::size_t>(link);
    if (m_stamp[l] != m_phase) {
        m_stamp[l] = m_phase;
        m_up[l] = 0;
        m_down[l] = 0;
        m_touched.push_back(link);
    }
}

void LinkTraffic::addLink(int link, double up, double down)
{
    if (link < 0)
        return;
    touch(link);
    const std::size_t l = static_cast<std::size_t>(link);
    m_up[l] += up;
    m_down[l] += down;
    m_totalUp[l] += up * m_repeats;
    m_totalDown[l] += down * m_repeats;
}

double LinkTraffic::phaseUp(int link) const
{
    const std::size_t l = static_cast<std::size_t>(link);
    return m_stamp[l] == m_phase ? m_up[l] : 0.0;
}

double LinkTraffic::phaseDown(int link) const
{
    const std::size_t l = static_cast<std::size_t>(link);
    return m_stamp[l] == m_phase ? m_down[l] : 0.0;
}

void LinkTraffic::addNvlink(int gpu, double egress, double ingress)
{
    const auto links = m_t.gpuNvlinks(gpu);
    if (links.empty())
        return;
    double lanes = 0;
    for (int l : links)
        lanes += m_t.links()[static_cast<std::size_t>(l)].lanes;
    for (int l : links) {
        const double share = m_t.links()[static_cast<std::size_t>(l)].lanes / lanes;
        addLink(l, egress * share, ingress * share);
    }
}

void LinkTraffic::addHostToNic(int gpu, int nic, double toNic, double fromNic)
{
    addLink(m_t.gpuHostLink(gpu), toNic, fromNic);
    // The NIC's link runs NIC (a) -> host (b): data going to the NIC travels "down".
    addLink(m_t.nicHostLink(nic), fromNic, toNic);
}

void LinkTraffic::addNicToLeaf(int nic, double up, double down)
{
    addLink(m_t.nicUplink(nic), up, down);
}

void LinkTraffic::addLeafToSpine(int leaf, double up, double down, double flows)
{
    if (leaf < 0 || m_t.leafUplinks(leaf).empty())
        return;
    const std::size_t i = static_cast<std::size_t>(leaf);
    if (m_leafStamp[i] != m_phase) {
        m_leafStamp[i] = m_phase;
        m_leafUp[i] = m_leafDown[i] = m_leafFlowsUp[i] = m_leafFlowsDown[i] = 0;
        m_touchedLeaves.push_back(leaf);
    }
    m_leafUp[i] += up;
    m_leafDown[i] += down;
    m_leafFlowsUp[i] += up > 0 ? flows : 0;
    m_leafFlowsDown[i] += down > 0 ? flows : 0;
}

void LinkTraffic::addNetwork(int srcNic, int dstNic, double bytes, double flows)
{
    if (srcNic == dstNic || bytes <= 0)
        return;
    addLink(m_t.nicUplink(srcNic), bytes, 0);
    addLink(m_t.nicUplink(dstNic), 0, bytes);
    const int a = m_t.leafOfNic(srcNic);
    const int b = m_t.leafOfNic(dstNic);
    if (a == b || a < 0 || b < 0)
        return;
    addLeafToSpine(a, bytes, 0, flows);
    addLeafToSpine(b, 0, bytes, flows);
    const ClusterShape &s = m_t.shape();
    if (s.fabric == FabricKind::ThreeTier && s.cores > 0) {
        const int podA = a / std::max(1, s.leavesPerPod);
        const int podB = b / std::max(1, s.leavesPerPod);
        if (podA != podB) {
            m_podUp[static_cast<std::size_t>(podA)] += bytes;
            m_podDown[static_cast<std::size_t>(podB)] += bytes;
        }
    }
}

void LinkTraffic::addPciePeer(int gpuA, int gpuB, double bytes)
{
    // GPU -> its PCIe switch -> (CPU -> other CPU) -> other switch -> GPU.
    const int la = m_t.gpuHostLink(gpuA);
    const int lb = m_t.gpuHostLink(gpuB);
    addLink(la, bytes, 0);
    addLink(lb, 0, bytes);
    const int swA = m_t.links()[static_cast<std::size_t>(la)].b;
    const int swB = m_t.links()[static_cast<std::size_t>(lb)].b;
    if (swA == swB)
        return;
    const auto hostOf = [&](int sw, int &cpu) {
        for (int l : m_t.linksOf(sw)) {
            const int other = m_t.otherEnd(l, sw);
            if (m_t.devices()[static_cast<std::size_t>(other)].kind == DeviceKind::Cpu) {
                cpu = other;
                return l;
            }
        }
        cpu = -1;
        return -1;
    };
    int cpuA = -1, cpuB = -1;
    addLink(hostOf(swA, cpuA), bytes, 0);
    addLink(hostOf(swB, cpuB), 0, bytes);
    if (cpuA >= 0 && cpuB >= 0 && cpuA != cpuB) {
        for (int l : m_t.linksOf(cpuA))
            if (m_t.otherEnd(l, cpuA) == cpuB) {
                const bool forward = m_t.links()[static_cast<std::size_t>(l)].a == cpuA;
                addLink(l, forward ? bytes : 0, forward ? 0 : bytes);
            }
    }
}

void LinkTraffic::spreadUplinks()
{
    if (m_spread)
        return;
    m_spread = true;
    const int qps = std::max(1, m_qps);
    for (int leaf : m_touchedLeaves) {
        const std::size_t i = static_cast<std::size_t>(leaf);
        const auto ups = m_t.leafUplinks(leaf);
        double lanes = 0;
        for (int l : ups)
            lanes += m_t.links()[static_cast<std::size_t>(l)].lanes;
        for (int l : ups) {
            const double share = m_t.links()[static_cast<std::size_t>(l)].lanes / lanes;
            addLink(l, m_leafUp[i] * share, m_leafDown[i] * share);
        }
        m_leafEff[i] = m_adaptive ? 1.0
                                  : ecmpEfficiency(std::max(m_leafFlowsUp[i], m_leafFlowsDown[i])
                                                           * qps,
                                                   std::round(lanes));
    }
    const ClusterShape &s = m_t.shape();
    if (s.fabric == FabricKind::ThreeTier && s.cores > 0) {
        for (std::size_t pod = 0; pod < m_podUp.size(); ++pod) {
            if (m_podUp[pod] == 0 && m_podDown[pod] == 0)
                continue;
            const int first = static_cast<int>(pod) * s.spinesPerPod;
            const double perSpine = 1.0 / s.spinesPerPod;
            for (int k = 0; k < s.spinesPerPod; ++k) {
                const auto ups = m_t.spineUplinks(first + k);
                for (int l : ups)
                    addLink(l,
                            m_podUp[pod] * perSpine / ups.size(),
                            m_podDown[pod] * perSpine / ups.size());
            }
        }
    }
}

double LinkTraffic::uplinkEfficiency(int leaf) const
{
    return m_leafEff[static_cast<std::size_t>(leaf)];
}

double LinkTraffic::phaseTime()
{
    spreadUplinks();
    double worst = 0;
    m_bottleneck = -1;
    const auto &links = m_t.links();
    const auto &devices = m_t.devices();
    for (int l : m_touched) {
        const std::size_t i = static_cast<std::size_t>(l);
        const Link &link = links[i];
        double rate = link.effectiveGbPerS() * 1e9
                      * m_kindScale[static_cast<std::size_t>(link.kind)];
        if (devices[static_cast<std::size_t>(link.a)].kind == DeviceKind::Leaf
            && devices[static_cast<std::size_t>(link.b)].kind == DeviceKind::Spine)
            rate *= m_leafEff[static_cast<std::size_t>(
                    devices[static_cast<std::size_t>(link.a)].index)];
        if (rate <= 0)
            continue;
        const double t = std::max(m_up[i], m_down[i]) / rate;
        if (t > worst) {
            worst = t;
            m_bottleneck = l;
        }
    }
    return worst;
}

} // namespace railyard::engine
