// Servers from the layout's explicit devices and links (format 2): every server gets the
// template's GPUs, NICs, PCIe switches, CPUs and NVSwitches, its PCIe tree and its NVLinks.
#include "topology/topologybuilder_p.h"

#include <algorithm>

namespace railyard::engine {

void TopologyBuilder::buildExplicitServers()
{
    const ServerTemplate &tp = *m_cluster.server;
    ClusterShape &s = m_topology.m_shape;
    const GpuSpec &g = m_topology.m_gpu;
    const int gpn = s.gpusPerNode;
    const int G = s.gpuCount();
    const std::size_t count = tp.devices.size();

    // Template positions by kind, and each device's index among its kind in the server.
    std::vector<int> localOf(count, 0);
    std::vector<std::vector<int>> byKind(5);
    for (std::size_t i = 0; i < count; ++i) {
        auto &list = byKind[static_cast<std::size_t>(tp.devices[i].kind)];
        localOf[i] = static_cast<int>(list.size());
        list.push_back(static_cast<int>(i));
    }
    const auto &gpus = byKind[static_cast<std::size_t>(ServerDeviceKind::Gpu)];
    const auto &nics = byKind[static_cast<std::size_t>(ServerDeviceKind::Nic)];
    const int nicsPerNode = static_cast<int>(nics.size());
    bool direct = false, switched = false;
    for (const ServerLink &l : tp.links) {
        const auto kindOf = [&](const std::string &id) {
            return tp.devices[static_cast<std::size_t>(tp.indexOf(id))].kind;
        };
        (kindOf(l.a) == kindOf(l.b) ? direct : switched) = true;
    }
    s.explicitServer = true;
    s.pcieOnly = tp.links.empty();
    // A board with both is priced as switched (its direct links as extra lanes of the GPU's
    // NVLink port).
    s.directNvlink = direct && !switched;
    // NVLink SHARP runs in NVSwitches.
    s.nvlsEnabled = s.nvlsEnabled && switched && !direct;

    // Device ids: GPUs first (id == GPU index), then per server its NVSwitches, CPUs and PCIe
    // switches, then every NIC (NIC index = server x NICs per server + position).
    std::vector<int> idOf(static_cast<std::size_t>(s.nodes) * count, -1);
    const auto id = [&](int node, int position) -> int & {
        return idOf[static_cast<std::size_t>(node) * count + static_cast<std::size_t>(position)];
    };
    m_topology.m_firstGpu = 0;
    for (int n = 0; n < s.nodes; ++n)
        for (int p : gpus)
            id(n, p) = addDevice(DeviceKind::Gpu,
                                 n * gpn + localOf[static_cast<std::size_t>(p)],
                                 n,
                                 localOf[static_cast<std::size_t>(p)],
                                 n / s.serversPerRack,
                                 n);
    int inner[3] = {0, 0, 0}; // NVSwitch, CPU, PCIe switch counters over the cluster
    const struct
    {
        ServerDeviceKind from;
        DeviceKind to;
    } innerKinds[] = {{ServerDeviceKind::NvSwitch, DeviceKind::NvSwitch},
                      {ServerDeviceKind::Cpu, DeviceKind::Cpu},
                      {ServerDeviceKind::PcieSwitch, DeviceKind::PcieSwitch}};
    for (int n = 0; n < s.nodes; ++n)
        for (int k = 0; k < 3; ++k)
            for (int p : byKind[static_cast<std::size_t>(innerKinds[k].from)])
                id(n, p) = addDevice(innerKinds[k].to,
                                     inner[k]++,
                                     n,
                                     localOf[static_cast<std::size_t>(p)],
                                     n / s.serversPerRack,
                                     n);
    m_topology.m_firstNic = static_cast<int>(m_topology.m_devices.size());
    for (int n = 0; n < s.nodes; ++n)
        for (int p : nics) {
            const int j = localOf[static_cast<std::size_t>(p)];
            id(n,
               p) = addDevice(DeviceKind::Nic, n * nicsPerNode + j, n, j, n / s.serversPerRack, n);
            m_topology.m_devices[static_cast<std::size_t>(id(n, p))].rail = j;
        }

    // Links inside each server.
    const double pcieGb = m_pcie ? m_pcie->gbPerS : 64;
    const double pcieEff = m_pcie ? m_pcie->efficiency : 0.8;
    const double perLane = g.nvlink.links > 0 ? g.nvlink.gbPerS / g.nvlink.links : 25.0;
    const double nvEff = g.nvlink.efficiency > 0 ? g.nvlink.efficiency : 0.8;
    const auto &cpus = byKind[static_cast<std::size_t>(ServerDeviceKind::Cpu)];
    bool c2c = false;
    for (const ServerDevice &d : tp.devices)
        c2c = c2c || d.c2c;
    m_topology.m_gpuHostLink.assign(static_cast<std::size_t>(G), -1);
    m_topology.m_nicHostLink.assign(static_cast<std::size_t>(s.nodes) * nicsPerNode, -1);
    std::vector<std::vector<int>> nvOf(static_cast<std::size_t>(G));
    for (int n = 0; n < s.nodes; ++n) {
        // The SMP interconnect between sockets, as in the generated servers (UPI, or
        // Grace-Grace where GPUs hang off Grace over C2C).
        for (std::size_t k = 0; k + 1 < cpus.size(); ++k)
            addLink(id(n, cpus[k]),
                    id(n, cpus[k + 1]),
                    c2c ? LinkKind::C2C : LinkKind::Pcie,
                    c2c ? 300 : 62,
                    c2c ? 0.8 : 0.35,
                    0.2);
        for (std::size_t p = 0; p < count; ++p) {
            const ServerDevice &d = tp.devices[p];
            if (d.host.empty())
                continue;
            const int dev = id(n, static_cast<int>(p));
            const int host = id(n, tp.indexOf(d.host));
            const int link = d.c2c ? addLink(dev,
                                             host,
                                             LinkKind::C2C,
                                             d.hostGbps.value_or(450.0),
                                             0.8,
                                             0.3)
                                   : addLink(dev,
                                             host,
                                             LinkKind::Pcie,
                                             d.hostGbps.value_or(pcieGb),
                                             pcieEff,
                                             0.5);
            setHost(dev, link);
            if (d.kind == ServerDeviceKind::Gpu)
                m_topology.m_gpuHostLink[static_cast<std::size_t>(dev)] = link;
            else if (d.kind == ServerDeviceKind::Nic)
                m_topology.m_nicHostLink[static_cast<std::size_t>(dev - m_topology.m_firstNic)]
                        = link;
        }
        for (const ServerLink &l : tp.links) {
            int a = id(n, tp.indexOf(l.a)), b = id(n, tp.indexOf(l.b));
            if (m_topology.m_devices[static_cast<std::size_t>(a)].kind != DeviceKind::Gpu
                || (m_topology.m_devices[static_cast<std::size_t>(b)].kind == DeviceKind::Gpu
                    && b < a))
                std::swap(a, b); // the GPU end (the lower GPU) first
            const int link = addLink(a, b, LinkKind::NvLink, perLane * l.count, nvEff, 0.5, l.count);
            nvOf[static_cast<std::size_t>(a)].push_back(link);
            if (m_topology.m_devices[static_cast<std::size_t>(b)].kind == DeviceKind::Gpu)
                nvOf[static_cast<std::size_t>(b)].push_back(link);
        }
    }
    m_topology.m_gpuNvStart.assign(static_cast<std::size_t>(G) + 1, 0);
    m_topology.m_gpuNvlinks.clear();
    for (int i = 0; i < G; ++i) {
        auto &mine = nvOf[static_cast<std::size_t>(i)];
        m_topology.m_gpuNvlinks.insert(m_topology.m_gpuNvlinks.end(), mine.begin(), mine.end());
        m_topology.m_gpuNvStart[static_cast<std::size_t>(i) + 1] = static_cast<int>(
                m_topology.m_gpuNvlinks.size());
    }

    // Which NICs carry each GPU's traffic.
    const std::vector<std::vector<int>> affinity = serverGpuNics(tp);
    int fewest = nicsPerNode > 0 ? nicsPerNode : 0;
    std::vector<int> sharers(static_cast<std::size_t>(nicsPerNode), 0);
    for (const auto &list : affinity) {
        fewest = std::min(fewest, static_cast<int>(list.size()));
        for (int k : list)
            ++sharers[static_cast<std::size_t>(k)];
    }
    s.nicsPerGpu = fewest;
    s.gpusPerNic = nicsPerNode > 0 ? std::max(1, *std::max_element(sharers.begin(), sharers.end()))
                                   : 0;
    m_topology.m_gpuNicStart.assign(static_cast<std::size_t>(G) + 1, 0);
    m_topology.m_gpuNics.clear();
    for (int i = 0; i < G; ++i) {
        const int n = i / gpn;
        for (int k : affinity[static_cast<std::size_t>(i % gpn)])
            m_topology.m_gpuNics.push_back(m_topology.m_firstNic + n * nicsPerNode + k);
        m_topology.m_gpuNicStart[static_cast<std::size_t>(i) + 1] = static_cast<int>(
                m_topology.m_gpuNics.size());
    }
}

} // namespace railyard::engine
