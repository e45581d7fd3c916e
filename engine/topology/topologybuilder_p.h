#pragma once

// The builder shared by the files that make a Topology: generated servers
// (topologygenerate.cpp), explicit servers (topologyexplicit.cpp) and fabrics
// (topologyfabric.cpp).
#include "topology/topology.h"

namespace railyard::engine {

// A new Topology::buildId() (buildTopology, withFaults).
std::uint64_t nextTopologyBuildId();

class TopologyBuilder
{
public:
    TopologyBuilder(const ClusterConfig &config, const Catalog &catalog)
        : m_cluster(config)
        , m_catalog(catalog)
    {}

    Topology build();

public: // the builder is private to the topology files
    int addDevice(DeviceKind kind, int index, int node, int local, int rack, int domain)
    {
        Device d;
        d.kind = kind;
        d.index = index;
        d.node = node;
        d.local = local;
        d.rack = rack;
        d.domain = domain;
        m_topology.m_devices.push_back(d);
        return static_cast<int>(m_topology.m_devices.size()) - 1;
    }
    int addLink(int a,
                int b,
                LinkKind kind,
                double gbPerS,
                double efficiency,
                double latencyUs,
                double lanes = 1)
    {
        Link l;
        l.a = a;
        l.b = b;
        l.kind = kind;
        l.gbPerS = gbPerS;
        l.efficiency = m_cluster.tuning.efficiency.value_or(efficiency);
        l.latencyUs = latencyUs;
        l.lanes = lanes;
        m_topology.m_links.push_back(l);
        return static_cast<int>(m_topology.m_links.size()) - 1;
    }
    // Records `link` as the way from `device` up to its PCIe switch or CPU.
    void setHost(int device, int link)
    {
        if (m_topology.m_hostLink.size() <= static_cast<std::size_t>(device))
            m_topology.m_hostLink.resize(static_cast<std::size_t>(device) + 1, -1);
        m_topology.m_hostLink[static_cast<std::size_t>(device)] = link;
    }
    void buildServers();
    void buildExplicitServers();
    void buildRailOptimized();
    void buildSingleSwitch();
    void buildThreeTier();

    const ClusterConfig &m_cluster;
    const Catalog &m_catalog;
    Topology m_topology;
    const PcieSpec *m_pcie = nullptr;
    LinkKind m_netKind = LinkKind::Ib;
};

} // namespace railyard::engine
