// Generated servers: HGX/DGX, NVL72 trays, PCIe-only boxes.
#include "topology/topologybuilder_p.h"

#include "base/inputerror.h"

#include <algorithm>
#include <atomic>
#include <cmath>

namespace railyard::engine {

Topology TopologyBuilder::build()
{
    const GpuSpec *gpu = cat.gpu(c.gpu);
    if (!gpu)
        throw InputError("cluster: unknown GPU \"" + c.gpu
                         + "\" (expected one of: " + cat.gpuIdList() + ")");
    t.m_gpu = *gpu;
    const NicModel *nic = !c.nic.model.empty() ? cat.nic(c.nic.model) : nullptr;
    if (!c.nic.model.empty() && !nic)
        throw InputError("cluster.nic: unknown NIC model \"" + c.nic.model + "\"");
    if (!nic)
        nic = cat.nicForRate(c.nic.gbitPerS, "ib");
    NicModel custom;
    if (!nic) {
        // An unusual rate: an InfiniBand NIC at that rate with the usual achieved fraction.
        custom.id = "custom";
        custom.name = std::to_string(static_cast<int>(c.nic.gbitPerS)) + "G NIC";
        custom.fabric = "ib";
        custom.gbitPerS = c.nic.gbitPerS;
        custom.efficiency = 0.96;
        custom.latencyUs = 1.0;
        nic = &custom;
    }
    t.m_nic = *nic;
    t.m_nic.gbitPerS = c.nic.gbitPerS; // the layout's rate wins over the model's nominal one
    netKind = t.m_nic.fabric == "ethernet" ? LinkKind::Ethernet : LinkKind::Ib;
    const SwitchModel *sw = cat.switchForRate(c.nic.gbitPerS, t.m_nic.fabric);
    if (sw)
        t.m_switch = *sw;
    else {
        t.m_switch.id = "switch";
        t.m_switch.name = "switch";
        t.m_switch.ports = 64;
        t.m_switch.portGbitPerS = c.nic.gbitPerS;
        t.m_switch.latencyUs = 0.2;
    }
    pcie = cat.pcie(gpu->pcieGen);
    if (!pcie && !cat.pcieGenerations().empty())
        pcie = &cat.pcieGenerations().back();

    ClusterShape &s = t.m_shape;
    s.nodes = c.nodes;
    s.gpusPerNode = c.gpusPerNode;
    s.domainSize = c.nvlinkDomain;
    s.nodesPerDomain = c.nodesPerDomain();
    s.nicsPerNode = c.nicsPerNode();
    s.nicsPerGpu = s.nicsPerNode == 0 ? 0 : std::max(1, s.nicsPerNode / c.gpusPerNode);
    s.gpusPerNic = s.nicsPerNode == 0 ? 0 : std::max(1, c.gpusPerNode / s.nicsPerNode);
    s.serversPerRack = c.effectiveServersPerRack();
    s.racks = (c.nodes + s.serversPerRack - 1) / s.serversPerRack;
    s.pcieOnly = c.nvlinkDomain == 1 || gpu->nvlink.links == 0;
    s.fabric = c.fabric.kind;
    s.oversubscription = c.fabric.oversubscription;
    s.hasFabric = c.nodes > 1 && s.nicsPerNode > 0;
    if (c.nodes > 1 && s.nicsPerNode == 0 && s.domainCount() > 1)
        throw InputError("cluster.nic.per_gpu is 0, so the " + std::to_string(c.nodes)
                         + " servers cannot reach each other; expected at least 1 NIC per GPU");
    s.sharp = c.fabric.sharp && t.m_switch.sharp;
    s.nvlsEnabled = c.tuning.nvls && gpu->nvls;
    s.qpsPerConnection = c.tuning.qpsPerConnection;
    s.adaptiveRouting = c.tuning.adaptiveRouting.value_or(t.m_nic.fabric != "ethernet");

    t.m_devices.reserve(static_cast<std::size_t>(c.gpuCount()) * 3);
    t.m_links.reserve(static_cast<std::size_t>(c.gpuCount()) * 7);
    if (c.server)
        buildExplicitServers();
    else
        buildServers();
    if (s.hasFabric) {
        switch (c.fabric.kind) {
        case FabricKind::RailOptimized: buildRailOptimized(); break;
        case FabricKind::SingleSwitch: buildSingleSwitch(); break;
        case FabricKind::ThreeTier: buildThreeTier(); break;
        }
    }
    if (c.server && s.hasFabric) {
        // NICs of an explicit server may run at their own rate.
        const int perNode = s.nicsPerNode;
        int j = 0;
        for (const ServerDevice &d : c.server->devices) {
            if (d.kind != ServerDeviceKind::Nic)
                continue;
            if (d.gbps)
                for (int n = 0; n < s.nodes; ++n) {
                    const int up = t.nicUplink(n * perNode + j);
                    if (up >= 0)
                        t.m_links[static_cast<std::size_t>(up)].gbPerS = *d.gbps / 8.0;
                }
            ++j;
        }
    }
    t.finish();
    return std::move(t);
}

void TopologyBuilder::buildServers()
{
    ClusterShape &s = t.m_shape;
    const GpuSpec &g = t.m_gpu;
    const int G = s.gpuCount();
    const int gpn = s.gpusPerNode;
    const bool rackDomain = s.nodesPerDomain > 1;
    const bool tray = rackDomain; // NVL72-style compute trays: GPUs hang off Grace CPUs (C2C)

    // GPUs first, so device id == GPU index.
    t.m_firstGpu = 0;
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
        firstSwitchOfDomain[static_cast<std::size_t>(d)] = static_cast<int>(t.m_devices.size());
        for (int k = 0; k < switchesPerDomain; ++k)
            addDevice(DeviceKind::NvSwitch,
                      nvswitchIndex++,
                      rackDomain ? -1 : firstNode,
                      k,
                      firstNode / s.serversPerRack,
                      d);
    }
    if (switchesPerDomain > 0) {
        t.m_nvlinksPerGpu = switchesPerDomain;
        t.m_gpuNvlinks.resize(static_cast<std::size_t>(G) * switchesPerDomain);
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
                t.m_gpuNvlinks[static_cast<std::size_t>(i) * switchesPerDomain + k]
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
    const double pcieGb = pcie ? pcie->gbPerS : 64;
    const double pcieEff = pcie ? pcie->efficiency : 0.8;
    const int cpusPerNode = gpn >= 2 ? 2 : 1;
    const int pcieSwitchesPerNode = tray ? 0 : (gpn + 1) / 2;
    t.m_gpuHostLink.assign(static_cast<std::size_t>(G), -1);
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
        hosts[static_cast<std::size_t>(n)].firstCpu = static_cast<int>(t.m_devices.size());
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
        hosts[static_cast<std::size_t>(n)].firstPcie = static_cast<int>(t.m_devices.size());
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
            t.m_gpuHostLink[static_cast<std::size_t>(i)]
                    = addLink(i, cpu, LinkKind::C2C, 450.0, 0.8, 0.3);
        } else {
            const int sw = h.firstPcie + local / 2;
            t.m_gpuHostLink[static_cast<std::size_t>(i)]
                    = addLink(i, sw, LinkKind::Pcie, pcieGb, pcieEff, 0.5);
        }
    }

    for (int i = 0; i < G; ++i)
        setHost(i, t.m_gpuHostLink[static_cast<std::size_t>(i)]);

    // NICs, one rail per NIC position in the server.
    t.m_firstNic = static_cast<int>(t.m_devices.size());
    const int nicsPerNode = s.nicsPerNode;
    const int totalNics = s.nodes * nicsPerNode;
    t.m_gpuNics.resize(static_cast<std::size_t>(G) * s.nicsPerGpu);
    t.m_nicHostLink.resize(static_cast<std::size_t>(totalNics));
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
            t.m_devices[static_cast<std::size_t>(dev)].rail = j;
            const int host = tray ? h.firstCpu + (owner * cpusPerNode) / gpn
                                  : h.firstPcie + owner / 2;
            t.m_nicHostLink[static_cast<std::size_t>(nicIndex)]
                    = addLink(dev, host, LinkKind::Pcie, pcieGb, pcieEff, 0.5);
            setHost(dev, t.m_nicHostLink[static_cast<std::size_t>(nicIndex)]);
            if (s.gpusPerNic > 1) {
                for (int k = 0; k < s.gpusPerNic; ++k)
                    t.m_gpuNics[static_cast<std::size_t>(n * gpn + owner + k)] = dev;
            } else {
                const int gpu = n * gpn + owner;
                t.m_gpuNics[static_cast<std::size_t>(gpu) * s.nicsPerGpu + (j % s.nicsPerGpu)] = dev;
            }
        }
    }
}

Topology buildTopology(const ClusterConfig &cluster, const Catalog &catalog)
{
    static std::atomic<std::uint64_t> builds{0};
    Topology t = TopologyBuilder(cluster, catalog).build();
    t.m_buildId = ++builds;
    return t;
}

} // namespace railyard::engine
