#include "topology.h"

#include "inputerror.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>

namespace railyard::engine {

const char *toString(DeviceKind kind)
{
    switch (kind) {
    case DeviceKind::Gpu: return "gpu";
    case DeviceKind::NvSwitch: return "nvswitch";
    case DeviceKind::PcieSwitch: return "pcie-switch";
    case DeviceKind::Cpu: return "cpu";
    case DeviceKind::Nic: return "nic";
    case DeviceKind::Leaf: return "leaf";
    case DeviceKind::Spine: return "spine";
    case DeviceKind::Core: return "core";
    }
    return "device";
}

const char *toString(LinkKind kind)
{
    switch (kind) {
    case LinkKind::NvLink: return "nvlink";
    case LinkKind::Pcie: return "pcie";
    case LinkKind::Ib: return "ib";
    case LinkKind::Ethernet: return "ethernet";
    case LinkKind::C2C: return "c2c";
    }
    return "link";
}

int Topology::countOf(DeviceKind kind) const
{
    return m_countByKind.empty() ? 0 : m_countByKind[static_cast<int>(kind)];
}

int Topology::rackOfNode(int node) const
{
    return node / std::max(1, m_shape.serversPerRack);
}

std::span<const int> Topology::gpuNvlinks(int gpu) const
{
    if (m_nvlinksPerGpu == 0)
        return {};
    return {m_gpuNvlinks.data() + static_cast<std::size_t>(gpu) * m_nvlinksPerGpu,
            static_cast<std::size_t>(m_nvlinksPerGpu)};
}

int Topology::gpuHostLink(int gpu) const
{
    return m_gpuHostLink[static_cast<std::size_t>(gpu)];
}

std::span<const int> Topology::gpuNics(int gpu) const
{
    const int n = m_shape.nicsPerGpu;
    if (n == 0)
        return {};
    return {m_gpuNics.data() + static_cast<std::size_t>(gpu) * n, static_cast<std::size_t>(n)};
}

int Topology::nicHostLink(int nic) const
{
    return m_nicHostLink[static_cast<std::size_t>(nic)];
}

int Topology::nicUplink(int nic) const
{
    return m_nicUplink.empty() ? -1 : m_nicUplink[static_cast<std::size_t>(nic)];
}

int Topology::leafOfNic(int nic) const
{
    return m_nicLeaf.empty() ? -1 : m_nicLeaf[static_cast<std::size_t>(nic)];
}

std::span<const int> Topology::leafUplinks(int leaf) const
{
    if (m_uplinksPerLeaf == 0)
        return {};
    return {m_leafUplinks.data() + static_cast<std::size_t>(leaf) * m_uplinksPerLeaf,
            static_cast<std::size_t>(m_uplinksPerLeaf)};
}

std::span<const int> Topology::spineUplinks(int spine) const
{
    if (m_uplinksPerSpine == 0)
        return {};
    return {m_spineUplinks.data() + static_cast<std::size_t>(spine) * m_uplinksPerSpine,
            static_cast<std::size_t>(m_uplinksPerSpine)};
}

std::span<const int> Topology::linksOf(int device) const
{
    const int b = m_adjStart[static_cast<std::size_t>(device)];
    const int e = m_adjStart[static_cast<std::size_t>(device) + 1];
    return {m_adj.data() + b, static_cast<std::size_t>(e - b)};
}

int Topology::otherEnd(int link, int device) const
{
    const Link &l = m_links[static_cast<std::size_t>(link)];
    return l.a == device ? l.b : l.a;
}

std::string Topology::deviceName(int id) const
{
    const Device &d = m_devices[static_cast<std::size_t>(id)];
    const auto inNode = [&](const char *what) {
        return std::string(what) + " " + std::to_string(d.node) + "." + std::to_string(d.local);
    };
    switch (d.kind) {
    case DeviceKind::Gpu: return "GPU " + std::to_string(d.index);
    case DeviceKind::NvSwitch:
        if (d.node >= 0)
            return inNode("NVSwitch");
        return "NVSwitch r" + std::to_string(d.domain) + "." + std::to_string(d.local);
    case DeviceKind::PcieSwitch: return inNode("PCIe switch");
    case DeviceKind::Cpu: return inNode("CPU");
    case DeviceKind::Nic: return inNode("NIC");
    case DeviceKind::Leaf:
        return m_shape.fabric == FabricKind::SingleSwitch ? "switch"
                                                          : "leaf " + std::to_string(d.index);
    case DeviceKind::Spine: return "spine " + std::to_string(d.index);
    case DeviceKind::Core: return "core " + std::to_string(d.index);
    }
    return "device " + std::to_string(id);
}

std::string Topology::linkName(int link) const
{
    const Link &l = m_links[static_cast<std::size_t>(link)];
    return deviceName(l.a) + " \xE2\x80\x94 " + deviceName(l.b);
}

int Topology::findDevice(const std::string &query) const
{
    std::string q;
    for (char c : query)
        if (!std::isspace(static_cast<unsigned char>(c)))
            q += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::size_t split = 0;
    while (split < q.size() && !std::isdigit(static_cast<unsigned char>(q[split])))
        ++split;
    const std::string word = q.substr(0, split);
    const std::string rest = q.substr(split);
    if (rest.empty())
        return -1;
    int major = 0, minor = -1;
    const auto dot = rest.find('.');
    try {
        major = std::stoi(rest.substr(0, dot));
        if (dot != std::string::npos)
            minor = std::stoi(rest.substr(dot + 1));
    } catch (...) {
        return -1;
    }
    const auto byIndex = [&](DeviceKind kind, int first, int index) {
        return index >= 0 && index < countOf(kind) ? first + index : -1;
    };
    if (word == "gpu" || word.empty())
        return byIndex(DeviceKind::Gpu, m_firstGpu, major);
    if (word == "node" || word == "server" || word == "tray")
        return major < m_shape.nodes ? gpuDevice(major * m_shape.gpusPerNode) : -1;
    if (word == "rack") {
        const int node = major * std::max(1, m_shape.serversPerRack);
        return major < m_shape.racks ? gpuDevice(node * m_shape.gpusPerNode) : -1;
    }
    if (word == "leaf" || word == "switch")
        return byIndex(DeviceKind::Leaf, m_firstLeaf, major);
    if (word == "spine")
        return byIndex(DeviceKind::Spine, m_firstSpine, major);
    if (word == "core")
        return byIndex(DeviceKind::Core, m_firstCore, major);
    if (word == "nic" && minor >= 0 && major < m_shape.nodes && minor < m_shape.nicsPerNode)
        return nicDevice(major * m_shape.nicsPerNode + minor);
    // Anything else by its full name ("NVSwitch 17.2", "NVSwitch r3.5", "CPU 4.1",
    // "PCIe switch 4.2"): compare without case or spaces.
    const auto squeeze = [](const std::string &text) {
        std::string out;
        for (char c : text)
            if (!std::isspace(static_cast<unsigned char>(c)))
                out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return out;
    };
    std::string wanted = q;
    if (wanted.rfind("pciesw", 0) == 0 && wanted.rfind("pcieswitch", 0) != 0)
        wanted = "pcieswitch" + wanted.substr(6);
    for (int id = 0; id < deviceCount(); ++id)
        if (squeeze(deviceName(id)) == wanted)
            return id;
    return -1;
}

void Topology::finish()
{
    const int gpus = gpuCount();
    m_gpuNvRate.assign(static_cast<std::size_t>(gpus), 0.0);
    for (int g = 0; g < gpus; ++g)
        for (int l : gpuNvlinks(g))
            m_gpuNvRate[static_cast<std::size_t>(g)] += m_links[static_cast<std::size_t>(l)]
                                                                .effectiveGbPerS();
    const int nics = m_shape.nodes * m_shape.nicsPerNode;
    m_nicRate.assign(static_cast<std::size_t>(nics), 0.0);
    for (int n = 0; n < nics; ++n) {
        const double host = m_links[static_cast<std::size_t>(nicHostLink(n))].effectiveGbPerS();
        const int up = nicUplink(n);
        m_nicRate[static_cast<std::size_t>(n)]
                = up >= 0 ? std::min(host, m_links[static_cast<std::size_t>(up)].effectiveGbPerS())
                          : 0.0;
    }
    m_gpuIntraRate.resize(static_cast<std::size_t>(gpus));
    m_gpuLocalDomain.resize(static_cast<std::size_t>(gpus));
    for (int g = 0; g < gpus; ++g) {
        const std::size_t i = static_cast<std::size_t>(g);
        m_gpuIntraRate[i] = m_shape.pcieOnly ? m_links[static_cast<std::size_t>(gpuHostLink(g))]
                                                       .effectiveGbPerS()
                                             : m_gpuNvRate[i];
        m_gpuLocalDomain[i] = m_shape.pcieOnly ? g / m_shape.gpusPerNode : g / m_shape.domainSize;
    }
    m_gpuNetRate.assign(static_cast<std::size_t>(gpus), 0.0);
    const double share = std::max(1, m_shape.gpusPerNic);
    for (int g = 0; g < gpus; ++g) {
        double net = 0;
        for (int nic : gpuNics(g))
            net += m_nicRate[static_cast<std::size_t>(nic - m_firstNic)] / share;
        const double host = m_links[static_cast<std::size_t>(gpuHostLink(g))].effectiveGbPerS();
        m_gpuNetRate[static_cast<std::size_t>(g)] = std::min(net, host);
    }

    m_countByKind.assign(8, 0);
    for (const Device &d : m_devices)
        ++m_countByKind[static_cast<int>(d.kind)];
    m_adjStart.assign(m_devices.size() + 1, 0);
    for (const Link &l : m_links) {
        ++m_adjStart[static_cast<std::size_t>(l.a) + 1];
        ++m_adjStart[static_cast<std::size_t>(l.b) + 1];
    }
    for (std::size_t i = 1; i < m_adjStart.size(); ++i)
        m_adjStart[i] += m_adjStart[i - 1];
    m_adj.assign(static_cast<std::size_t>(m_adjStart.back()), 0);
    std::vector<int> fill(m_adjStart.begin(), m_adjStart.end() - 1);
    for (int i = 0; i < static_cast<int>(m_links.size()); ++i) {
        const Link &l = m_links[static_cast<std::size_t>(i)];
        m_adj[static_cast<std::size_t>(fill[static_cast<std::size_t>(l.a)]++)] = i;
        m_adj[static_cast<std::size_t>(fill[static_cast<std::size_t>(l.b)]++)] = i;
    }
}

class TopologyBuilder
{
public:
    TopologyBuilder(const ClusterConfig &config, const Catalog &catalog)
        : c(config)
        , cat(catalog)
    {}

    Topology build();

private:
    int addDevice(DeviceKind kind, int index, int node, int local, int rack, int domain)
    {
        Device d;
        d.kind = kind;
        d.index = index;
        d.node = node;
        d.local = local;
        d.rack = rack;
        d.domain = domain;
        t.m_devices.push_back(d);
        return static_cast<int>(t.m_devices.size()) - 1;
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
        l.efficiency = c.tuning.efficiency.value_or(efficiency);
        l.latencyUs = latencyUs;
        l.lanes = lanes;
        t.m_links.push_back(l);
        return static_cast<int>(t.m_links.size()) - 1;
    }
    void buildServers();
    void buildRailOptimized();
    void buildSingleSwitch();
    void buildThreeTier();

    const ClusterConfig &c;
    const Catalog &cat;
    Topology t;
    const PcieSpec *pcie = nullptr;
    LinkKind netKind = LinkKind::Ib;
};

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
    buildServers();
    if (s.hasFabric) {
        switch (c.fabric.kind) {
        case FabricKind::RailOptimized: buildRailOptimized(); break;
        case FabricKind::SingleSwitch: buildSingleSwitch(); break;
        case FabricKind::ThreeTier: buildThreeTier(); break;
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
            addLink(sw, cpu, LinkKind::Pcie, pcieGb, pcieEff, 0.5);
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

void TopologyBuilder::buildRailOptimized()
{
    ClusterShape &s = t.m_shape;
    const int radix = std::max(2, t.m_switch.ports);
    const double o = s.oversubscription;
    const int down = std::max(1, static_cast<int>(std::floor(radix * o / (1.0 + o))));
    s.rails = s.nicsPerNode;
    s.nodesPerLeafGroup = std::min(s.nodes, down);
    s.leafGroups = (s.nodes + s.nodesPerLeafGroup - 1) / s.nodesPerLeafGroup;
    s.leaves = s.leafGroups * s.rails;
    const double portGb = t.m_switch.portGbitPerS / 8.0;
    const double nicGb = t.m_nic.gbPerS();
    const double eff = t.m_nic.efficiency;

    t.m_firstLeaf = static_cast<int>(t.m_devices.size());
    for (int l = 0; l < s.leaves; ++l) {
        const int dev = addDevice(DeviceKind::Leaf, l, -1, l % s.rails, -1, -1);
        t.m_devices[static_cast<std::size_t>(dev)].rail = l % s.rails;
        t.m_devices[static_cast<std::size_t>(dev)].group = l / s.rails;
    }
    const int totalNics = s.nodes * s.nicsPerNode;
    t.m_nicUplink.resize(static_cast<std::size_t>(totalNics));
    t.m_nicLeaf.resize(static_cast<std::size_t>(totalNics));
    for (int n = 0; n < s.nodes; ++n) {
        const int su = n / s.nodesPerLeafGroup;
        for (int j = 0; j < s.nicsPerNode; ++j) {
            const int nic = n * s.nicsPerNode + j;
            const int leaf = su * s.rails + j;
            t.m_nicLeaf[static_cast<std::size_t>(nic)] = leaf;
            t.m_nicUplink[static_cast<std::size_t>(nic)] = addLink(t.nicDevice(nic),
                                                                   t.leafDevice(leaf),
                                                                   netKind,
                                                                   nicGb,
                                                                   eff,
                                                                   t.m_nic.latencyUs);
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
    t.m_firstSpine = static_cast<int>(t.m_devices.size());
    for (int k = 0; k < spines; ++k)
        addDevice(DeviceKind::Spine, k, -1, k, -1, -1);
    t.m_uplinksPerLeaf = spines;
    t.m_leafUplinks.resize(static_cast<std::size_t>(s.leaves) * spines);
    for (int l = 0; l < s.leaves; ++l)
        for (int k = 0; k < spines; ++k)
            t.m_leafUplinks[static_cast<std::size_t>(l) * spines + k] = addLink(t.leafDevice(l),
                                                                                t.spineDevice(k),
                                                                                netKind,
                                                                                portGb * lanes,
                                                                                eff,
                                                                                t.m_switch.latencyUs,
                                                                                lanes);
}

void TopologyBuilder::buildSingleSwitch()
{
    ClusterShape &s = t.m_shape;
    s.leaves = 1;
    s.leafGroups = 1;
    s.rails = 1;
    s.nodesPerLeafGroup = s.nodes;
    t.m_firstLeaf = static_cast<int>(t.m_devices.size());
    addDevice(DeviceKind::Leaf, 0, -1, 0, -1, -1);
    const int totalNics = s.nodes * s.nicsPerNode;
    t.m_nicUplink.resize(static_cast<std::size_t>(totalNics));
    t.m_nicLeaf.assign(static_cast<std::size_t>(totalNics), 0);
    for (int nic = 0; nic < totalNics; ++nic)
        t.m_nicUplink[static_cast<std::size_t>(nic)] = addLink(t.nicDevice(nic),
                                                               t.leafDevice(0),
                                                               netKind,
                                                               t.m_nic.gbPerS(),
                                                               t.m_nic.efficiency,
                                                               t.m_nic.latencyUs);
}

void TopologyBuilder::buildThreeTier()
{
    // A classic fat tree: leaves take NICs in server order (rails mixed), pods of leaves share
    // their spines, cores join the pods.
    ClusterShape &s = t.m_shape;
    const int radix = std::max(4, t.m_switch.ports);
    const double o = s.oversubscription;
    const int down = std::max(1, static_cast<int>(std::floor(radix * o / (1.0 + o))));
    const int totalNics = s.nodes * s.nicsPerNode;
    s.nicsPerLeaf = std::min(down, totalNics);
    s.leaves = (totalNics + s.nicsPerLeaf - 1) / s.nicsPerLeaf;
    s.leavesPerPod = std::min(s.leaves, radix / 2);
    const int pods = (s.leaves + s.leavesPerPod - 1) / s.leavesPerPod;
    s.leafGroups = pods;
    const double portGb = t.m_switch.portGbitPerS / 8.0;
    const double eff = t.m_nic.efficiency;

    t.m_firstLeaf = static_cast<int>(t.m_devices.size());
    for (int l = 0; l < s.leaves; ++l) {
        const int dev = addDevice(DeviceKind::Leaf, l, -1, l % s.leavesPerPod, -1, -1);
        t.m_devices[static_cast<std::size_t>(dev)].group = l / s.leavesPerPod;
    }
    t.m_nicUplink.resize(static_cast<std::size_t>(totalNics));
    t.m_nicLeaf.resize(static_cast<std::size_t>(totalNics));
    for (int nic = 0; nic < totalNics; ++nic) {
        const int leaf = nic / s.nicsPerLeaf;
        t.m_nicLeaf[static_cast<std::size_t>(nic)] = leaf;
        t.m_nicUplink[static_cast<std::size_t>(nic)] = addLink(t.nicDevice(nic),
                                                               t.leafDevice(leaf),
                                                               netKind,
                                                               t.m_nic.gbPerS(),
                                                               eff,
                                                               t.m_nic.latencyUs);
    }
    if (s.leaves <= 1)
        return;
    const double up = std::ceil(s.nicsPerLeaf / o);
    s.spinesPerPod = static_cast<int>(std::clamp(std::ceil(s.leavesPerPod * up / radix), 1.0, up));
    s.spines = s.spinesPerPod * pods;
    const double leafLanes = up / s.spinesPerPod;
    t.m_firstSpine = static_cast<int>(t.m_devices.size());
    for (int k = 0; k < s.spines; ++k) {
        const int dev = addDevice(DeviceKind::Spine, k, -1, k % s.spinesPerPod, -1, -1);
        t.m_devices[static_cast<std::size_t>(dev)].group = k / s.spinesPerPod;
    }
    t.m_uplinksPerLeaf = s.spinesPerPod;
    t.m_leafUplinks.resize(static_cast<std::size_t>(s.leaves) * s.spinesPerPod);
    for (int l = 0; l < s.leaves; ++l) {
        const int pod = l / s.leavesPerPod;
        for (int k = 0; k < s.spinesPerPod; ++k)
            t.m_leafUplinks[static_cast<std::size_t>(l) * s.spinesPerPod + k]
                    = addLink(t.leafDevice(l),
                              t.spineDevice(pod * s.spinesPerPod + k),
                              netKind,
                              portGb * leafLanes,
                              eff,
                              t.m_switch.latencyUs,
                              leafLanes);
    }
    if (pods <= 1)
        return;
    // Each spine sends its pod's traffic up with the same oversubscription.
    const double spineDown = s.leavesPerPod * leafLanes;
    const double spineUp = std::ceil(spineDown / o);
    s.cores = static_cast<int>(std::clamp(std::ceil(s.spines * spineUp / radix), 1.0, spineUp));
    const double coreLanes = spineUp / s.cores;
    t.m_firstCore = static_cast<int>(t.m_devices.size());
    for (int k = 0; k < s.cores; ++k)
        addDevice(DeviceKind::Core, k, -1, k, -1, -1);
    t.m_uplinksPerSpine = s.cores;
    t.m_spineUplinks.resize(static_cast<std::size_t>(s.spines) * s.cores);
    for (int sp = 0; sp < s.spines; ++sp)
        for (int k = 0; k < s.cores; ++k)
            t.m_spineUplinks[static_cast<std::size_t>(sp) * s.cores + k]
                    = addLink(t.spineDevice(sp),
                              t.m_firstCore + k,
                              netKind,
                              portGb * coreLanes,
                              eff,
                              t.m_switch.latencyUs,
                              coreLanes);
}

Topology buildTopology(const ClusterConfig &cluster, const Catalog &catalog)
{
    static std::atomic<std::uint64_t> builds{0};
    Topology t = TopologyBuilder(cluster, catalog).build();
    t.m_buildId = ++builds;
    return t;
}

} // namespace railyard::engine
