#include "topology/topology.h"

#include "base/inputerror.h"

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

int Topology::linkCountOf(LinkKind kind) const
{
    return m_linkCountByKind.empty() ? 0 : m_linkCountByKind[static_cast<std::size_t>(kind) % 8];
}

int Topology::rackOfNode(int node) const
{
    return node / std::max(1, m_shape.serversPerRack);
}

std::span<const int> Topology::gpuNvlinks(int gpu) const
{
    if (!m_gpuNvStart.empty()) {
        const int b = m_gpuNvStart[static_cast<std::size_t>(gpu)];
        return {m_gpuNvlinks.data() + b,
                static_cast<std::size_t>(m_gpuNvStart[static_cast<std::size_t>(gpu) + 1] - b)};
    }
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
    if (!m_gpuNicStart.empty()) {
        const int b = m_gpuNicStart[static_cast<std::size_t>(gpu)];
        return {m_gpuNics.data() + b,
                static_cast<std::size_t>(m_gpuNicStart[static_cast<std::size_t>(gpu) + 1] - b)};
    }
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

int Topology::nvlinkBetween(int a, int b) const
{
    for (int l : gpuNvlinks(a))
        if (otherEnd(l, gpuDevice(a)) == gpuDevice(b))
            return l;
    return -1;
}

bool Topology::nvlinkRing(std::uint64_t mask) const
{
    if ((mask & (mask - 1)) == 0)
        return true;
    if (mask < m_localRing.size())
        return m_localRing[static_cast<std::size_t>(mask)] != 0;
    // Servers too large for the table: every member linked to two others, as a ring needs.
    const int gpn = m_shape.gpusPerNode;
    for (int k = 0; k < gpn && k < 64; ++k) {
        if (!(mask >> k & 1))
            continue;
        int peers = 0;
        for (int j = 0; j < gpn && j < 64; ++j)
            peers += j != k && (mask >> j & 1) && nvlinkBetween(k, j) >= 0;
        if (peers < 2)
            return false;
    }
    return true;
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

void Topology::fillRingTable()
{
    // Held's bitmask search over server 0 (every server has the same links): path[mask] has
    // bit v when a path from mask's lowest GPU through all of mask ends at v.
    const int n = m_shape.gpusPerNode;
    const std::size_t masks = std::size_t(1) << n;
    std::vector<std::uint32_t> adj(static_cast<std::size_t>(n), 0);
    for (int a = 0; a < n; ++a)
        for (int b = 0; b < n; ++b)
            if (a != b && nvlinkBetween(a, b) >= 0)
                adj[static_cast<std::size_t>(a)] |= 1u << b;
    std::vector<std::uint32_t> path(masks, 0);
    m_localRing.assign(masks, 0);
    for (std::size_t mask = 1; mask < masks; ++mask) {
        const int start = __builtin_ctzll(mask);
        if ((mask & (mask - 1)) == 0) {
            path[mask] = 1u << start;
            m_localRing[mask] = 1;
            continue;
        }
        std::uint32_t ends = 0;
        for (int v = 0; v < n; ++v) {
            if (v == start || !(mask >> v & 1))
                continue;
            const std::size_t rest = mask & ~(std::size_t(1) << v);
            if (path[rest] & adj[static_cast<std::size_t>(v)])
                ends |= 1u << v;
        }
        path[mask] = ends;
        m_localRing[mask] = (ends & adj[static_cast<std::size_t>(start)]) != 0;
    }
}

void Topology::finish()
{
    computeRates();
    m_hostLink.resize(m_devices.size(), -1);
    if (m_shape.directNvlink && m_shape.gpusPerNode <= 12)
        fillRingTable();

    m_countByKind.assign(8, 0);
    for (const Device &d : m_devices)
        ++m_countByKind[static_cast<int>(d.kind)];
    m_linkCountByKind.assign(8, 0);
    m_linkEnds.resize(m_links.size());
    for (std::size_t i = 0; i < m_links.size(); ++i) {
        const Link &l = m_links[i];
        ++m_linkCountByKind[static_cast<std::size_t>(l.kind) % 8];
        const int a = static_cast<int>(m_devices[static_cast<std::size_t>(l.a)].kind);
        const int b = static_cast<int>(m_devices[static_cast<std::size_t>(l.b)].kind);
        m_linkEnds[i] = static_cast<std::uint16_t>((a * kDeviceKinds + b) * kLinkKinds
                                                   + static_cast<int>(l.kind));
    }
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

void Topology::computeRates()
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
    // GPUs that share a NIC share its bandwidth.
    std::vector<int> sharers(static_cast<std::size_t>(nics), 0);
    for (int g = 0; g < gpus; ++g)
        if (!gpuDown(g))
            for (int nic : gpuNics(g))
                ++sharers[static_cast<std::size_t>(nic - m_firstNic)];
    // With faults, GPUs may reach their NICs through another GPU's PCIe link (PXN): those
    // sharing one share it, and the NVLink hop bounds what they send.
    std::vector<int> hostSharers;
    if (!m_gpuNetProxy.empty()) {
        hostSharers.assign(static_cast<std::size_t>(gpus), 0);
        for (int g = 0; g < gpus; ++g)
            if (!gpuDown(g))
                ++hostSharers[static_cast<std::size_t>(gpuNetProxy(g))];
    }
    for (int g = 0; g < gpus; ++g) {
        double net = 0;
        for (int nic : gpuNics(g))
            net += m_nicRate[static_cast<std::size_t>(nic - m_firstNic)]
                   / std::max(1, sharers[static_cast<std::size_t>(nic - m_firstNic)]);
        const int via = gpuNetProxy(g);
        double host = m_links[static_cast<std::size_t>(gpuHostLink(via))].effectiveGbPerS();
        if (!hostSharers.empty())
            host /= std::max(1, hostSharers[static_cast<std::size_t>(via)]);
        if (via != g)
            host = std::min(host, m_gpuNvRate[static_cast<std::size_t>(g)]);
        m_gpuNetRate[static_cast<std::size_t>(g)] = std::min(net, host);
    }
}

} // namespace railyard::engine
