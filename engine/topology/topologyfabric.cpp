// The fabric above the servers: rail-optimized, single switch, three tiers.
#include "topology/topologybuilder_p.h"

#include "base/inputerror.h"

#include <algorithm>
#include <cmath>

namespace railyard::engine {

void TopologyBuilder::buildRailOptimized()
{
    ClusterShape &s = m_topology.m_shape;
    const int radix = std::max(2, m_topology.m_switch.ports);
    const double o = s.oversubscription;
    const int down = std::max(1, static_cast<int>(std::floor(radix * o / (1.0 + o))));
    s.rails = s.nicsPerNode;
    s.nodesPerLeafGroup = std::min(s.nodes, down);
    s.leafGroups = (s.nodes + s.nodesPerLeafGroup - 1) / s.nodesPerLeafGroup;
    s.leaves = s.leafGroups * s.rails;
    const double portGb = m_topology.m_switch.portGbitPerS / 8.0;
    const double nicGb = m_topology.m_nic.gbPerS();
    const double eff = m_topology.m_nic.efficiency;

    m_topology.m_firstLeaf = static_cast<int>(m_topology.m_devices.size());
    for (int l = 0; l < s.leaves; ++l) {
        const int dev = addDevice(DeviceKind::Leaf, l, -1, l % s.rails, -1, -1);
        m_topology.m_devices[static_cast<std::size_t>(dev)].rail = l % s.rails;
        m_topology.m_devices[static_cast<std::size_t>(dev)].group = l / s.rails;
    }
    const int totalNics = s.nodes * s.nicsPerNode;
    m_topology.m_nicUplink.resize(static_cast<std::size_t>(totalNics));
    m_topology.m_nicLeaf.resize(static_cast<std::size_t>(totalNics));
    for (int n = 0; n < s.nodes; ++n) {
        const int su = n / s.nodesPerLeafGroup;
        for (int j = 0; j < s.nicsPerNode; ++j) {
            const int nic = n * s.nicsPerNode + j;
            const int leaf = su * s.rails + j;
            m_topology.m_nicLeaf[static_cast<std::size_t>(nic)] = leaf;
            m_topology.m_nicUplink[static_cast<std::size_t>(nic)]
                    = addLink(m_topology.nicDevice(nic),
                              m_topology.leafDevice(leaf),
                              m_netKind,
                              nicGb,
                              eff,
                              m_topology.m_nic.latencyUs);
        }
    }
    if (s.leaves <= 1)
        return;
    // Uplinks carry the leaf's downlink bandwidth divided by the oversubscription. Each spine
    // here is a spine plane: a logical switch that takes one share of every leaf's uplinks.
    const double up = std::ceil(s.nodesPerLeafGroup / o);
    const int spines = static_cast<int>(std::clamp(std::ceil(s.leaves * up / radix), 1.0, up));
    s.spines = spines;
    const double lanes = up / spines;
    m_topology.m_firstSpine = static_cast<int>(m_topology.m_devices.size());
    for (int k = 0; k < spines; ++k)
        addDevice(DeviceKind::Spine, k, -1, k, -1, -1);
    m_topology.m_uplinksPerLeaf = spines;
    m_topology.m_leafUplinks.resize(static_cast<std::size_t>(s.leaves) * spines);
    for (int l = 0; l < s.leaves; ++l)
        for (int k = 0; k < spines; ++k)
            m_topology.m_leafUplinks[static_cast<std::size_t>(l) * spines + k]
                    = addLink(m_topology.leafDevice(l),
                              m_topology.spineDevice(k),
                              m_netKind,
                              portGb * lanes,
                              eff,
                              m_topology.m_switch.latencyUs,
                              lanes);
}

void TopologyBuilder::buildSingleSwitch()
{
    ClusterShape &s = m_topology.m_shape;
    s.leaves = 1;
    s.leafGroups = 1;
    s.rails = 1;
    s.nodesPerLeafGroup = s.nodes;
    m_topology.m_firstLeaf = static_cast<int>(m_topology.m_devices.size());
    addDevice(DeviceKind::Leaf, 0, -1, 0, -1, -1);
    const int totalNics = s.nodes * s.nicsPerNode;
    m_topology.m_nicUplink.resize(static_cast<std::size_t>(totalNics));
    m_topology.m_nicLeaf.assign(static_cast<std::size_t>(totalNics), 0);
    for (int nic = 0; nic < totalNics; ++nic)
        m_topology.m_nicUplink[static_cast<std::size_t>(nic)] = addLink(m_topology.nicDevice(nic),
                                                                        m_topology.leafDevice(0),
                                                                        m_netKind,
                                                                        m_topology.m_nic.gbPerS(),
                                                                        m_topology.m_nic.efficiency,
                                                                        m_topology.m_nic.latencyUs);
}

void TopologyBuilder::buildThreeTier()
{
    // A classic fat tree: leaves take NICs in server order (rails mixed), pods of leaves share
    // their spines, cores join the pods.
    ClusterShape &s = m_topology.m_shape;
    const int radix = std::max(4, m_topology.m_switch.ports);
    const double o = s.oversubscription;
    const int down = std::max(1, static_cast<int>(std::floor(radix * o / (1.0 + o))));
    const int totalNics = s.nodes * s.nicsPerNode;
    s.nicsPerLeaf = std::min(down, totalNics);
    s.leaves = (totalNics + s.nicsPerLeaf - 1) / s.nicsPerLeaf;
    s.leavesPerPod = std::min(s.leaves, radix / 2);
    const int pods = (s.leaves + s.leavesPerPod - 1) / s.leavesPerPod;
    s.leafGroups = pods;
    const double portGb = m_topology.m_switch.portGbitPerS / 8.0;
    const double eff = m_topology.m_nic.efficiency;

    m_topology.m_firstLeaf = static_cast<int>(m_topology.m_devices.size());
    for (int l = 0; l < s.leaves; ++l) {
        const int dev = addDevice(DeviceKind::Leaf, l, -1, l % s.leavesPerPod, -1, -1);
        m_topology.m_devices[static_cast<std::size_t>(dev)].group = l / s.leavesPerPod;
    }
    m_topology.m_nicUplink.resize(static_cast<std::size_t>(totalNics));
    m_topology.m_nicLeaf.resize(static_cast<std::size_t>(totalNics));
    for (int nic = 0; nic < totalNics; ++nic) {
        const int leaf = nic / s.nicsPerLeaf;
        m_topology.m_nicLeaf[static_cast<std::size_t>(nic)] = leaf;
        m_topology.m_nicUplink[static_cast<std::size_t>(nic)] = addLink(m_topology.nicDevice(nic),
                                                                        m_topology.leafDevice(leaf),
                                                                        m_netKind,
                                                                        m_topology.m_nic.gbPerS(),
                                                                        eff,
                                                                        m_topology.m_nic.latencyUs);
    }
    if (s.leaves <= 1)
        return;
    const double up = std::ceil(s.nicsPerLeaf / o);
    s.spinesPerPod = static_cast<int>(std::clamp(std::ceil(s.leavesPerPod * up / radix), 1.0, up));
    s.spines = s.spinesPerPod * pods;
    const double leafLanes = up / s.spinesPerPod;
    m_topology.m_firstSpine = static_cast<int>(m_topology.m_devices.size());
    for (int k = 0; k < s.spines; ++k) {
        const int dev = addDevice(DeviceKind::Spine, k, -1, k % s.spinesPerPod, -1, -1);
        m_topology.m_devices[static_cast<std::size_t>(dev)].group = k / s.spinesPerPod;
    }
    m_topology.m_uplinksPerLeaf = s.spinesPerPod;
    m_topology.m_leafUplinks.resize(static_cast<std::size_t>(s.leaves) * s.spinesPerPod);
    for (int l = 0; l < s.leaves; ++l) {
        const int pod = l / s.leavesPerPod;
        for (int k = 0; k < s.spinesPerPod; ++k)
            m_topology.m_leafUplinks[static_cast<std::size_t>(l) * s.spinesPerPod + k]
                    = addLink(m_topology.leafDevice(l),
                              m_topology.spineDevice(pod * s.spinesPerPod + k),
                              m_netKind,
                              portGb * leafLanes,
                              eff,
                              m_topology.m_switch.latencyUs,
                              leafLanes);
    }
    if (pods <= 1)
        return;
    // Each spine sends its pod's traffic up with the same oversubscription.
    const double spineDown = s.leavesPerPod * leafLanes;
    const double spineUp = std::ceil(spineDown / o);
    s.cores = static_cast<int>(std::clamp(std::ceil(s.spines * spineUp / radix), 1.0, spineUp));
    const double coreLanes = spineUp / s.cores;
    m_topology.m_firstCore = static_cast<int>(m_topology.m_devices.size());
    for (int k = 0; k < s.cores; ++k)
        addDevice(DeviceKind::Core, k, -1, k, -1, -1);
    m_topology.m_uplinksPerSpine = s.cores;
    m_topology.m_spineUplinks.resize(static_cast<std::size_t>(s.spines) * s.cores);
    for (int sp = 0; sp < s.spines; ++sp)
        for (int k = 0; k < s.cores; ++k)
            m_topology.m_spineUplinks[static_cast<std::size_t>(sp) * s.cores + k]
                    = addLink(m_topology.spineDevice(sp),
                              m_topology.m_firstCore + k,
                              m_netKind,
                              portGb * coreLanes,
                              eff,
                              m_topology.m_switch.latencyUs,
                              coreLanes);
}

} // namespace railyard::engine
