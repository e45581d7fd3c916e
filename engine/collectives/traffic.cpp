// A collective's bytes landing on the links (traffic.h): binding to a topology, a phase's
// additions on NVLink, PCIe, NICs and the fabric, and the uplinks' ECMP spread.
#include "collectives/traffic.h"

#include <boost/math/distributions/poisson.hpp>

#include <algorithm>
#include <cmath>

namespace railyard::engine {

double ecmpEfficiency(double flows, double paths)
{
    if (flows <= 0 || paths <= 1)
        return 1.0;
    const double lambda = flows / paths;
    // E[max] of `paths` independent Poisson(lambda) loads (the balls-into-bins approximation):
    // the sum over t >= 1 of P(max >= t) = 1 - P(X < t)^paths, with Boost.Math's Poisson CDF
    // (no underflow at any mean: exp(-lambda) alone, which a hand-rolled sum started from, is 0
    // past lambda = 745). The terms fall from 1 to 0 around the mean: up to the first t whose
    // term is below 1 (found by bisection) each one is exactly 1.0 and is counted, not summed.
    using Policy = boost::math::policies::policy<boost::math::policies::promote_double<false>>;
    const boost::math::poisson_distribution<double, Policy> poisson(lambda);
    const auto pMaxAtLeast = [&](int t) {
        return 1.0 - std::pow(boost::math::cdf(poisson, t - 1), paths);
    };
    // Bisection on the terms, which only fall as t grows: P(max >= 0) is 1 by definition.
    int lo = 0, hi = static_cast<int>(std::ceil(lambda)) + 1;
    while (hi - lo > 1) {
        const int mid = lo + (hi - lo) / 2;
        (pMaxAtLeast(mid) == 1.0 ? lo : hi) = mid;
    }
    double expectedMax = lo;
    for (int t = lo + 1; t < lo + 100000; ++t) {
        const double p = pMaxAtLeast(t);
        expectedMax += p;
        if (p < 1e-9 && t > lambda)
            break;
    }
    // A whole flow cannot be split: the busiest uplink carries at least ceil(lambda) flows.
    expectedMax = std::max(expectedMax, std::ceil(lambda - 1e-9));
    return std::min(1.0, lambda / expectedMax);
}

void LinkRates::fill(const Topology &t)
{
    const auto &all = t.links();
    links.resize(all.size());
    for (std::size_t i = 0; i < all.size(); ++i)
        links[i] = {static_cast<float>(all[i].effectiveGbPerS() * 1e9),
                    -1,
                    all[i].kind == LinkKind::NvLink};
    const int leaves = t.countOf(DeviceKind::Leaf);
    for (int leaf = 0; leaf < leaves; ++leaf)
        for (int l : t.leafUplinks(leaf))
            links[static_cast<std::size_t>(l)].uplinkLeaf = leaf;
    source = t.buildId();
}

LinkTraffic::LinkTraffic(const Topology &t)
{
    bind(t);
}

void LinkTraffic::bind(const Topology &t)
{
    // Rates always come from this topology: another one with the same counts (a tuning
    // change, rebuilt in the same place) has other rates.
    m_ownRates.fill(t);
    bind(t, m_ownRates);
}

void LinkTraffic::bind(const Topology &t, const LinkRates &rates)
{
    m_t = &t;
    m_rates = &rates;
    const std::size_t n = static_cast<std::size_t>(t.linkCount());
    const std::size_t gpus = static_cast<std::size_t>(t.gpuCount());
    const std::size_t leaves = static_cast<std::size_t>(t.countOf(DeviceKind::Leaf));
    // A phase's cells are cleared when first touched (by stamp), so only a new size needs
    // fresh ones; totals and peaks are summed into, so they start at zero every time.
    if (m_cells.size() != n)
        m_cells.assign(n, {});
    if (m_ports.size() != gpus)
        m_ports.assign(gpus, {});
    if (m_leaves.size() != leaves)
        m_leaves.assign(leaves, {});
    m_totals.assign(n, {});
    m_peak.assign(n, 0.0f);
    m_portTotals.assign(gpus, {});
    m_portPeak.assign(gpus, 0.0f);
    m_leafEff.assign(leaves, 1.0);
    m_podUp.assign(static_cast<std::size_t>(std::max(1, t.shape().leafGroups)), 0);
    m_podDown.assign(m_podUp.size(), 0);
    m_direct = t.shape().directNvlink;
    m_peers.assign(m_direct ? gpus : 0, ~std::uint64_t(0));
    // Adaptive routing, or a NIC that sprays each flow's packets over every path (EFA's SRD):
    // no flow is pinned to one uplink.
    m_adaptive = t.shape().adaptiveRouting || t.nicModel().multipath;
    m_qps = t.shape().qpsPerConnection;
    beginPhase(1.0);
}

void LinkTraffic::beginPhase(double repeats)
{
    ++m_phase;
    m_repeats = repeats;
    m_touched.clear();
    m_touchedPorts.clear();
    m_touchedLeaves.clear();
    m_kindScale = {1, 1, 1, 1, 1};
    std::fill(m_podUp.begin(), m_podUp.end(), 0.0);
    std::fill(m_podDown.begin(), m_podDown.end(), 0.0);
    m_bottleneck = -1;
    m_spread = false;
    m_committed = false;
}

void LinkTraffic::setKindScale(LinkKind kind, double scale)
{
    m_kindScale[static_cast<std::size_t>(kind)] = scale;
}

void LinkTraffic::addNvlink(int gpu, double egress, double ingress)
{
    if (!m_direct) {
        addToCell(m_ports[static_cast<std::size_t>(gpu)], gpu, m_touchedPorts, egress, ingress);
        return;
    }
    // A direct mesh: the GPU's sends spread over its NVLinks to the group's other members by
    // lanes, as NCCL's rings over several channels use them. Its ingress is its peers' egress,
    // counted on their side, so a pair's bytes are not counted twice.
    const std::uint64_t peers = m_peers[static_cast<std::size_t>(gpu)];
    const int gpn = m_t->shape().gpusPerNode;
    const int first = gpu - m_t->localOfGpu(gpu);
    double lanes = 0;
    const auto linked = [&](int l) {
        const int other = m_t->otherEnd(l, gpu) - first;
        return other >= 0 && other < gpn && other < 64 && (peers >> other & 1);
    };
    for (int l : m_t->gpuNvlinks(gpu))
        if (linked(l))
            lanes += m_t->links()[static_cast<std::size_t>(l)].workingLanes();
    if (lanes <= 0)
        return;
    for (int l : m_t->gpuNvlinks(gpu)) {
        if (!linked(l))
            continue;
        const double part = egress * m_t->links()[static_cast<std::size_t>(l)].workingLanes()
                            / lanes;
        const bool forward = m_t->links()[static_cast<std::size_t>(l)].a == gpu;
        addLinkUnchecked(l, forward ? part : 0, forward ? 0 : part);
    }
    (void)ingress;
}

void LinkTraffic::setNvlinkPeers(int gpu, std::uint64_t localMask)
{
    if (m_direct)
        m_peers[static_cast<std::size_t>(gpu)] = localMask;
}

void LinkTraffic::commitPhase()
{
    if (m_committed)
        return;
    spreadUplinks();
    m_committed = true;
    if (m_keepTotals)
        repeatPhase(m_repeats);
}

void LinkTraffic::addHostToNic(int gpu, int nic, double toNic, double fromNic)
{
    // With a NIC or PCIe link down (cluster.faults), the GPU may reach another NIC up its
    // server's PCIe tree, or over NVLink through the GPU beside that NIC (PXN).
    switch (m_t->gpuNetPath(gpu)) {
    case NetPath::Direct: break;
    case NetPath::PcieTree:
        addPciePeer(m_t->gpuDevice(gpu), m_t->nicDevice(nic), toNic);
        addPciePeer(m_t->nicDevice(nic), m_t->gpuDevice(gpu), fromNic);
        return;
    case NetPath::Pxn: {
        const int via = m_t->gpuNetProxy(gpu);
        addNvlink(gpu, toNic, fromNic);
        addNvlink(via, fromNic, toNic);
        gpu = via;
        break;
    }
    }
    addLink(m_t->gpuHostLink(gpu), toNic, fromNic);
    // The NIC's link runs NIC (a) -> host (b): data going to the NIC travels "down".
    addLink(m_t->nicHostLink(nic), fromNic, toNic);
}

void LinkTraffic::addNicToLeaf(int nic, double up, double down)
{
    addLink(m_t->nicUplink(nic), up, down);
}

void LinkTraffic::addLeafToSpine(int leaf, double up, double down, double flows)
{
    if (leaf < 0 || m_t->leafUplinks(leaf).empty())
        return;
    LeafCell &c = m_leaves[static_cast<std::size_t>(leaf)];
    if (c.stamp != m_phase) {
        c = LeafCell{};
        c.stamp = m_phase;
        m_touchedLeaves.push_back(leaf);
    }
    c.up += up;
    c.down += down;
    c.flowsUp += up > 0 ? flows : 0;
    c.flowsDown += down > 0 ? flows : 0;
}

void LinkTraffic::addNetwork(int srcNic, int dstNic, double bytes, double flows)
{
    if (srcNic == dstNic || bytes <= 0)
        return;
    addLink(m_t->nicUplink(srcNic), bytes, 0);
    addLink(m_t->nicUplink(dstNic), 0, bytes);
    const int a = m_t->leafOfNic(srcNic);
    const int b = m_t->leafOfNic(dstNic);
    if (a == b || a < 0 || b < 0)
        return;
    addLeafToSpine(a, bytes, 0, flows);
    addLeafToSpine(b, 0, bytes, flows);
    const int podA = podOfLeaf(a);
    const int podB = podOfLeaf(b);
    if (podA != podB) {
        addPodToCore(podA, bytes, 0);
        addPodToCore(podB, 0, bytes);
    }
}

int LinkTraffic::podOfLeaf(int leaf) const
{
    const ClusterShape &s = m_t->shape();
    if (leaf < 0 || s.fabric != FabricKind::ThreeTier || s.cores <= 0)
        return -1;
    return leaf / std::max(1, s.leavesPerPod);
}

void LinkTraffic::addPodToCore(int pod, double up, double down)
{
    if (pod < 0)
        return;
    m_podUp[static_cast<std::size_t>(pod)] += up;
    m_podDown[static_cast<std::size_t>(pod)] += down;
}

void LinkTraffic::addPciePeer(int gpuA, int gpuB, double bytes)
{
    // Up the PCIe tree from A to the switch or CPU above both (across the SMP link when their
    // CPUs differ), then down to B.
    const Topology &t = *m_t;
    const auto parent = [&](int device, int &link) {
        link = t.hostLink(device);
        return link < 0 ? -1 : t.otherEnd(link, device);
    };
    thread_local std::vector<int> upA;
    upA.clear();
    int link = -1;
    for (int d = gpuA; d >= 0; d = parent(d, link))
        upA.push_back(d);
    int meet = -1;
    for (int d = gpuB; d >= 0; d = parent(d, link)) {
        if (std::find(upA.begin(), upA.end(), d) != upA.end()) {
            meet = d;
            break;
        }
        if (t.hostLink(d) >= 0)
            addLink(t.hostLink(d), 0, bytes); // towards B: down its host links
    }
    for (int d : upA) {
        if (d == meet)
            break;
        addLink(t.hostLink(d), bytes, 0);
    }
    if (meet >= 0)
        return;
    // Different CPUs: the roots of both chains.
    int rootB = gpuB;
    while (t.hostLink(rootB) >= 0)
        rootB = parent(rootB, link);
    const int rootA = upA.back();
    for (int l : t.linksOf(rootA))
        if (t.otherEnd(l, rootA) == rootB) {
            const bool forward = t.links()[static_cast<std::size_t>(l)].a == rootA;
            addLink(l, forward ? bytes : 0, forward ? 0 : bytes);
            return;
        }
    // CPUs not linked directly (more than two sockets): the first SMP link out of A's CPU.
    for (int l : t.linksOf(rootA)) {
        const int other = t.otherEnd(l, rootA);
        if (t.devices()[static_cast<std::size_t>(other)].kind == DeviceKind::Cpu) {
            const bool forward = t.links()[static_cast<std::size_t>(l)].a == rootA;
            addLink(l, forward ? bytes : 0, forward ? 0 : bytes);
            return;
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
        const LeafCell &c = m_leaves[static_cast<std::size_t>(leaf)];
        const auto ups = m_t->leafUplinks(leaf);
        double lanes = 0;
        for (int l : ups)
            lanes += m_t->links()[static_cast<std::size_t>(l)].workingLanes();
        if (lanes <= 0)
            continue; // every uplink down: the topology refuses a leaf that needs one
        for (int l : ups) {
            const double share = m_t->links()[static_cast<std::size_t>(l)].workingLanes() / lanes;
            addLinkUnchecked(l, c.up * share, c.down * share);
        }
        m_leafEff[static_cast<std::size_t>(leaf)] = m_adaptive
                                                            ? 1.0
                                                            : ecmpEfficiency(std::max(c.flowsUp,
                                                                                      c.flowsDown)
                                                                                     * qps,
                                                                             std::round(lanes));
    }
    const ClusterShape &s = m_t->shape();
    if (s.fabric == FabricKind::ThreeTier && s.cores > 0) {
        for (std::size_t pod = 0; pod < m_podUp.size(); ++pod) {
            if (m_podUp[pod] == 0 && m_podDown[pod] == 0)
                continue;
            const int first = static_cast<int>(pod) * s.spinesPerPod;
            if (m_t->hasFaults()) {
                // Spines or core links down: the pod's traffic spreads over the lanes left.
                double lanes = 0;
                for (int k = 0; k < s.spinesPerPod; ++k)
                    for (int l : m_t->spineUplinks(first + k))
                        lanes += m_t->links()[static_cast<std::size_t>(l)].workingLanes();
                for (int k = 0; k < s.spinesPerPod && lanes > 0; ++k)
                    for (int l : m_t->spineUplinks(first + k)) {
                        const double share = m_t->links()[static_cast<std::size_t>(l)].workingLanes()
                                             / lanes;
                        addLinkUnchecked(l, m_podUp[pod] * share, m_podDown[pod] * share);
                    }
                continue;
            }
            const double perSpine = 1.0 / s.spinesPerPod;
            for (int k = 0; k < s.spinesPerPod; ++k) {
                const auto ups = m_t->spineUplinks(first + k);
                for (int l : ups)
                    addLinkUnchecked(l,
                                     m_podUp[pod] * perSpine / ups.size(),
                                     m_podDown[pod] * perSpine / ups.size());
            }
        }
    }
}

} // namespace railyard::engine
