// Generated servers: HGX/DGX, NVL72 trays, PCIe-only boxes.
#include "topology/topologybuilder_p.h"

#include "base/inputerror.h"

#include <algorithm>
#include <atomic>
#include <cmath>

namespace railyard::engine {

Topology TopologyBuilder::build()
{
    const GpuSpec *gpu = m_catalog.gpu(m_cluster.gpu);
    if (!gpu)
        throw InputError("cluster: unknown GPU \"" + m_cluster.gpu
                         + "\" (expected one of: " + m_catalog.gpuIdList() + ")");
    m_topology.m_gpu = *gpu;
    const NicModel *nic = !m_cluster.nic.model.empty() ? m_catalog.nic(m_cluster.nic.model)
                                                       : nullptr;
    if (!m_cluster.nic.model.empty() && !nic)
        throw InputError("cluster.nic: unknown NIC model \"" + m_cluster.nic.model + "\"");
    if (!nic)
        nic = m_catalog.nicForRate(m_cluster.nic.gbitPerS, "ib");
    NicModel custom;
    if (!nic) {
        // An unusual rate: an InfiniBand NIC at that rate with the usual achieved fraction.
        custom.id = "custom";
        custom.name = std::to_string(static_cast<int>(m_cluster.nic.gbitPerS)) + "G NIC";
        custom.fabric = "ib";
        custom.transport = "ib";
        custom.gbitPerS = m_cluster.nic.gbitPerS;
        custom.efficiency = 0.96;
        custom.latencyUs = 1.0;
        nic = &custom;
    }
    m_topology.m_nic = *nic;
    m_topology.m_nic.gbitPerS
            = m_cluster.nic.gbitPerS; // the layout's rate wins over the model's nominal one
    m_netKind = m_topology.m_nic.fabric == "ethernet" ? LinkKind::Ethernet : LinkKind::Ib;
    const SwitchModel *sw = m_catalog.switchForRate(m_cluster.nic.gbitPerS, m_topology.m_nic.fabric);
    if (sw)
        m_topology.m_switch = *sw;
    else {
        m_topology.m_switch.id = "switch";
        m_topology.m_switch.name = "switch";
        m_topology.m_switch.ports = 64;
        m_topology.m_switch.portGbitPerS = m_cluster.nic.gbitPerS;
        m_topology.m_switch.latencyUs = 0.2;
    }
    m_pcie = m_catalog.pcie(gpu->pcieGen);
    if (!m_pcie && !m_catalog.pcieGenerations().empty())
        m_pcie = &m_catalog.pcieGenerations().back();

    ClusterShape &s = m_topology.m_shape;
    s.nodes = m_cluster.nodes;
    s.gpusPerNode = m_cluster.gpusPerNode;
    s.domainSize = m_cluster.nvlinkDomain;
    s.nodesPerDomain = m_cluster.nodesPerDomain();
    s.nicsPerNode = m_cluster.nicsPerNode();
    s.nicsPerGpu = s.nicsPerNode == 0 ? 0 : std::max(1, s.nicsPerNode / m_cluster.gpusPerNode);
    s.gpusPerNic = s.nicsPerNode == 0 ? 0 : std::max(1, m_cluster.gpusPerNode / s.nicsPerNode);
    s.serversPerRack = m_cluster.effectiveServersPerRack();
    s.racks = (m_cluster.nodes + s.serversPerRack - 1) / s.serversPerRack;
    s.pcieOnly = m_cluster.nvlinkDomain == 1 || gpu->nvlink.links == 0;
    s.fabric = m_cluster.fabric.kind;
    s.oversubscription = m_cluster.fabric.oversubscription;
    s.hasFabric = m_cluster.nodes > 1 && s.nicsPerNode > 0;
    if (m_cluster.nodes > 1 && s.nicsPerNode == 0 && s.domainCount() > 1)
        throw InputError("cluster.nic.per_gpu is 0, so the " + std::to_string(m_cluster.nodes)
                         + " servers cannot reach each other; expected at least 1 NIC per GPU");
    s.sharp = m_cluster.fabric.sharp && m_topology.m_switch.sharp;
    s.nvlsEnabled = m_cluster.tuning.nvls && gpu->nvls;
    s.qpsPerConnection = m_cluster.tuning.qpsPerConnection;
    s.adaptiveRouting = m_cluster.tuning.adaptiveRouting.value_or(m_topology.m_nic.fabric
                                                                  != "ethernet");

    // Room for every device and link at once: moving a million links to a larger buffer
    // costs more than the rest of the build. At most a link per NVLink port and four more per
    // GPU inside the servers (PCIe, C2C, the CPUs), four per NIC in the fabric (its uplink, its
    // share of the leaves', spines' and cores' uplinks); eight devices per GPU (an NVL72 tray
    // has 7.6) and two per NIC. Pages never written cost nothing. Over the 263 shipped, test
    // and published-run layouts the links take at most 84% of it, the devices 76%.
    const std::size_t gpus = static_cast<std::size_t>(m_cluster.gpuCount());
    const std::size_t nics = static_cast<std::size_t>(s.nodes)
                             * static_cast<std::size_t>(s.nicsPerNode);
    m_topology.m_devices.reserve(gpus * 8 + nics * 2);
    m_topology.m_links.reserve(gpus * (static_cast<std::size_t>(gpu->nvlink.links) + 4) + nics * 4);
    if (m_cluster.server)
        buildExplicitServers();
    else
        buildServers();
    if (s.hasFabric) {
        switch (m_cluster.fabric.kind) {
        case FabricKind::RailOptimized: buildRailOptimized(); break;
        case FabricKind::SingleSwitch: buildSingleSwitch(); break;
        case FabricKind::ThreeTier: buildThreeTier(); break;
        }
    }
    if (m_cluster.server && s.hasFabric) {
        // NICs of an explicit server may run at their own rate.
        const int perNode = s.nicsPerNode;
        int j = 0;
        for (const ServerDevice &d : m_cluster.server->devices) {
            if (d.kind != ServerDeviceKind::Nic)
                continue;
            if (d.gbps)
                for (int n = 0; n < s.nodes; ++n) {
                    const int up = m_topology.nicUplink(n * perNode + j);
                    if (up >= 0)
                        m_topology.m_links[static_cast<std::size_t>(up)].gbPerS = *d.gbps / 8.0;
                }
            ++j;
        }
    }
    m_topology.finish();
    return std::move(m_topology);
}

void TopologyBuilder::buildServers()
{
    ClusterShape &s = m_topology.m_shape;
    const GpuSpec &g = m_topology.m_gpu;
    const int G = s.gpuCount();
    const int gpn = s.gpusPerNode;
    const bool rackDomain = s.nodesPerDomain > 1;
    const bool tray = rackDomain; // NVL72-style compute trays: GPUs hang off Grace CPUs (C2C)

    // GPUs first, so device id == GPU index.
    m_topology.m_firstGpu = 0;
    for (int i = 0; i < G; ++i) {
        const int node = i / gpn;
        addDevice(DeviceKind::Gpu, i, node, i % gpn, node / s.serversPerRack, i / s.domainSize);
    }

    // NVSwitches: per server for HGX, per rack-scale domain for NVL72.
    const int switchesPerDomain = s.pcieOnly ? 0 : std::max(1, g.nvswitchesPerDomain);
    const int domains = s.domainCount();
    std::vector<int> firstSwitchOfDomain(static_cast<std::size_t>(domains), -1);
    int nvswitchIndex = 0;
    for (int d = 0; d < domains && switchesPerDomain > 0; ++d) {
        const int firstNode = d * s.nodesPerDomain;
        firstSwitchOfDomain[static_cast<std::size_t>(d)] = static_cast<int>(
                m_topology.m_devices.size());
        for (int k = 0; k < switchesPerDomain; ++k)
            addDevice(DeviceKind::NvSwitch,
                      nvswitchIndex++,
                      rackDomain ? -1 : firstNode,
                      k,
                      firstNode / s.serversPerRack,
                      d);
    }
    if (switchesPerDomain > 0) {
        m_topology.m_nvlinksPerGpu = switchesPerDomain;
        m_topology.m_gpuNvlinks.resize(static_cast<std::size_t>(G) * switchesPerDomain);
        const double perLink = g.nvlink.links > 0 ? g.nvlink.gbPerS / g.nvlink.links : 0;
        for (int i = 0; i < G; ++i) {
            const int first = firstSwitchOfDomain[static_cast<std::size_t>(i / s.domainSize)];
            for (int k = 0; k < switchesPerDomain; ++k) {
                // Spread the GPU's links over the switches as evenly as they go (18 over 4:
                // 5, 4, 4, 5 as in the HGX H100 NCCL topology dump).
                const int base = g.nvlink.links / switchesPerDomain;
                const int extra = g.nvlink.links % switchesPerDomain;
                const bool more = k < (extra + 1) / 2 || k >= switchesPerDomain - extra / 2;
                const int lanes = std::max(1, base + (more ? 1 : 0));
                m_topology.m_gpuNvlinks[static_cast<std::size_t>(i) * switchesPerDomain + k]
                        = addLink(i,
                                  first + k,
                                  LinkKind::NvLink,
                                  perLink * lanes,
                                  g.nvlink.efficiency,
                                  0.5,
                                  lanes);
            }
        }
    }

    // Inside each server: CPUs, PCIe switches (two GPUs and their NICs each), NICs.
    const double pcieGb = m_pcie ? m_pcie->gbPerS : 64;
    const double pcieEff = m_pcie ? m_pcie->efficiency : 0.8;
    const int cpusPerNode = gpn >= 2 ? 2 : 1;
    const int pcieSwitchesPerNode = tray ? 0 : (gpn + 1) / 2;
    m_topology.m_gpuHostLink.assign(static_cast<std::size_t>(G), -1);
    int cpuIndex = 0, pcieIndex = 0;
    struct NodeHosts
    {
        int firstCpu;
        int firstPcie;
    };
    std::vector<NodeHosts> hosts(static_cast<std::size_t>(s.nodes));
    for (int n = 0; n < s.nodes; ++n) {
        const int rack = n / s.serversPerRack;
        const int domain = n / s.nodesPerDomain;
        hosts[static_cast<std::size_t>(n)].firstCpu = static_cast<int>(m_topology.m_devices.size());
        for (int k = 0; k < cpusPerNode; ++k)
            addDevice(DeviceKind::Cpu, cpuIndex++, n, k, rack, domain);
        if (cpusPerNode == 2) {
            // The SMP interconnect between sockets (UPI / Grace-Grace), which PCIe-only servers
            // cross when GPUs on different sockets talk. NCCL: SPR 22 GB/s, Grace ~ C2C class.
            const int first = hosts[static_cast<std::size_t>(n)].firstCpu;
            addLink(first,
                    first + 1,
                    tray ? LinkKind::C2C : LinkKind::Pcie,
                    tray ? 300 : 62,
                    tray ? 0.8 : 0.35,
                    0.2);
        }
        hosts[static_cast<std::size_t>(n)].firstPcie = static_cast<int>(m_topology.m_devices.size());
        for (int k = 0; k < pcieSwitchesPerNode; ++k) {
            const int sw = addDevice(DeviceKind::PcieSwitch, pcieIndex++, n, k, rack, domain);
            const int cpu = hosts[static_cast<std::size_t>(n)].firstCpu
                            + (k * cpusPerNode) / pcieSwitchesPerNode;
            setHost(sw, addLink(sw, cpu, LinkKind::Pcie, pcieGb, pcieEff, 0.5));
        }
    }
    for (int i = 0; i < G; ++i) {
        const int n = i / gpn;
        const int local = i % gpn;
        const NodeHosts &h = hosts[static_cast<std::size_t>(n)];
        if (tray) {
            // GB200: each GPU reaches its Grace CPU over NVLink-C2C (900 GB/s both ways).
            const int cpu = h.firstCpu + (local * cpusPerNode) / gpn;
            m_topology.m_gpuHostLink[static_cast<std::size_t>(i)]
                    = addLink(i, cpu, LinkKind::C2C, 450.0, 0.8, 0.3);
        } else {
            const int sw = h.firstPcie + local / 2;
            m_topology.m_gpuHostLink[static_cast<std::size_t>(i)]
                    = addLink(i, sw, LinkKind::Pcie, pcieGb, pcieEff, 0.5);
        }
    }

    for (int i = 0; i < G; ++i)
        setHost(i, m_topology.m_gpuHostLink[static_cast<std::size_t>(i)]);

    // NICs, one rail per NIC position in the server.
    m_topology.m_firstNic = static_cast<int>(m_topology.m_devices.size());
    const int nicsPerNode = s.nicsPerNode;
    const int totalNics = s.nodes * nicsPerNode;
    m_topology.m_gpuNics.resize(static_cast<std::size_t>(G) * s.nicsPerGpu);
    m_topology.m_nicHostLink.resize(static_cast<std::size_t>(totalNics));
    for (int n = 0; n < s.nodes; ++n) {
        const NodeHosts &h = hosts[static_cast<std::size_t>(n)];
        for (int j = 0; j < nicsPerNode; ++j) {
            const int nicIndex = n * nicsPerNode + j;
            // The local GPU this NIC sits beside (the first of those sharing it).
            const int owner = static_cast<int>(1LL * j * gpn / nicsPerNode);
            const int dev = addDevice(DeviceKind::Nic,
                                      nicIndex,
                                      n,
                                      j,
                                      n / s.serversPerRack,
                                      n / s.nodesPerDomain);
            m_topology.m_devices[static_cast<std::size_t>(dev)].rail = j;
            const int host = tray ? h.firstCpu + (owner * cpusPerNode) / gpn
                                  : h.firstPcie + owner / 2;
            m_topology.m_nicHostLink[static_cast<std::size_t>(nicIndex)]
                    = addLink(dev, host, LinkKind::Pcie, pcieGb, pcieEff, 0.5);
            setHost(dev, m_topology.m_nicHostLink[static_cast<std::size_t>(nicIndex)]);
            if (s.gpusPerNic > 1) {
                for (int k = 0; k < s.gpusPerNic; ++k)
                    m_topology.m_gpuNics[static_cast<std::size_t>(n * gpn + owner + k)] = dev;
            } else {
                const int gpu = n * gpn + owner;
                m_topology
                        .m_gpuNics[static_cast<std::size_t>(gpu) * s.nicsPerGpu + (j % s.nicsPerGpu)]
                        = dev;
            }
        }
    }
}

std::uint64_t nextTopologyBuildId()
{
    static std::atomic<std::uint64_t> builds{0};
    return ++builds;
}

Topology buildTopology(const ClusterConfig &cluster, const Catalog &catalog)
{
    Topology t = TopologyBuilder(cluster, catalog).build();
    if (!cluster.faults.empty())
        t.applyFaults(cluster.faults);
    t.m_buildId = nextTopologyBuildId();
    return t;
}

} // namespace railyard::engine
