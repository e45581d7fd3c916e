// The explicit server (layout format 2) of an imported machine: its GPUs, rail NICs, PCIe
// switches, CPUs and NVLinks as the file shows them.
#include "import/importer.h"

#include "base/jsoncursor.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace railyard::engine {

namespace {

struct UnionFind
{
    std::vector<int> parent;
    explicit UnionFind(int n)
        : parent(static_cast<std::size_t>(n))
    {
        std::iota(parent.begin(), parent.end(), 0);
    }
    int find(int x)
    {
        while (parent[static_cast<std::size_t>(x)] != x)
            x = parent[static_cast<std::size_t>(x)]
                    = parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(x)])];
        return x;
    }
    void join(int a, int b) { parent[static_cast<std::size_t>(find(a))] = find(b); }
};

// Numbers the distinct roots of `uf` over [0, n) in order of first appearance.
std::vector<int> groups(UnionFind &uf, int n, int &count)
{
    std::map<int, int> number;
    std::vector<int> out(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i)
        out[static_cast<std::size_t>(i)]
                = number.emplace(uf.find(i), static_cast<int>(number.size())).first->second;
    count = static_cast<int>(number.size());
    return out;
}

} // namespace

std::optional<ServerTemplate> serverFromImport(const ImportedMachine &m, const GpuSpec &spec)
{
    // nccl-tests logs and NCCL graphs name GPUs, not the board.
    if (m.format != "nvidia-smi-topo" && m.format != "nccl-topo-xml")
        return std::nullopt;
    const int gpus = m.gpusPerHost();
    if (gpus < 1 || gpus > 128)
        return std::nullopt;
    // Rail NICs: those near a GPU; all of them when none is (VMs, Grace boards).
    std::vector<int> nics;
    for (int k = 0; k < static_cast<int>(m.nics.size()); ++k)
        if (m.nics[static_cast<std::size_t>(k)].nearestGpu >= 0)
            nics.push_back(k);
    if (nics.empty())
        for (int k = 0; k < static_cast<int>(m.nics.size()); ++k)
            nics.push_back(k);
    if (nics.size() > 256)
        return std::nullopt;
    // Devices here: GPUs 0..gpus-1, then the kept NICs; file NIC k is device gpus + k.
    const int total = gpus + static_cast<int>(nics.size());
    std::vector<int> slotOfFileNic(m.nics.size(), -1);
    for (std::size_t j = 0; j < nics.size(); ++j)
        slotOfFileNic[static_cast<std::size_t>(nics[j])] = gpus + static_cast<int>(j);
    const auto slot = [&](int fileDevice) {
        if (fileDevice < 0)
            return -1;
        if (fileDevice < gpus)
            return fileDevice;
        const int k = fileDevice - static_cast<int>(m.gpus.size());
        return k >= 0 && k < static_cast<int>(m.nics.size())
                       ? slotOfFileNic[static_cast<std::size_t>(k)]
                       : -1;
    };

    // CPUs and PCIe switches.
    UnionFind cpuOf(total), switchOf(total);
    std::vector<bool> c2c(static_cast<std::size_t>(gpus), false);
    if (m.format == "nccl-topo-xml") {
        // The file says both: NUMA node and top switch of each device.
        const auto numaOf = [&](int d) {
            return d < gpus ? m.gpus[static_cast<std::size_t>(d)].numa
                            : m.nics[static_cast<std::size_t>(
                                             nics[static_cast<std::size_t>(d - gpus)])]
                                      .numa;
        };
        const auto switchAbove = [&](int d) {
            return d < gpus ? m.gpus[static_cast<std::size_t>(d)].pcieSwitch
                            : m.nics[static_cast<std::size_t>(
                                             nics[static_cast<std::size_t>(d - gpus)])]
                                      .pcieSwitch;
        };
        for (int a = 0; a < total; ++a)
            for (int b = a + 1; b < total; ++b) {
                if (numaOf(a) == numaOf(b))
                    cpuOf.join(a, b);
                if (switchAbove(a) >= 0 && switchAbove(a) == switchAbove(b))
                    switchOf.join(a, b);
            }
        for (const ImportedLink &l : m.links)
            if (l.kind == "c2c" && l.a >= 0 && l.a < gpus)
                c2c[static_cast<std::size_t>(l.a)] = true;
    } else {
        // nvidia-smi: PIX/PXB share a switch; anything short of SYS shares a CPU; so does the
        // same NUMA affinity.
        for (const ImportedLink &l : m.links) {
            const int a = slot(l.a), b = slot(l.b);
            if (a < 0 || b < 0)
                continue;
            if (l.kind == "pix" || l.kind == "pxb")
                switchOf.join(a, b);
            if (l.kind == "pix" || l.kind == "pxb" || l.kind == "phb" || l.kind == "node")
                cpuOf.join(a, b);
        }
        std::map<std::string, int> byAffinity;
        for (int g = 0; g < gpus; ++g) {
            const ImportedGpu &x = m.gpus[static_cast<std::size_t>(g)];
            std::string key = x.numaAffinity;
            if (key.empty() || key == "N/A")
                key = x.cpuAffinity.empty() || x.cpuAffinity == "N/A" ? "" : "cpu:" + x.cpuAffinity;
            if (key.empty())
                continue;
            if (const auto [it, fresh] = byAffinity.emplace(key, g); !fresh)
                cpuOf.join(g, it->second);
        }
    }
    int cpuCount = 0, switchGroups = 0;
    const std::vector<int> cpu = groups(cpuOf, total, cpuCount);
    const std::vector<int> sw = groups(switchOf, total, switchGroups);
    std::vector<int> groupSize(static_cast<std::size_t>(switchGroups), 0);
    for (int d = 0; d < total; ++d)
        ++groupSize[static_cast<std::size_t>(sw[static_cast<std::size_t>(d)])];

    ServerTemplate s;
    for (int k = 0; k < cpuCount; ++k)
        s.devices.push_back(
                {"cpu" + std::to_string(k), ServerDeviceKind::Cpu, {}, {}, false, {}, {}, {}});
    // A switch for every group of two or more devices (a lone device hangs off its CPU).
    std::vector<std::string> switchId(static_cast<std::size_t>(switchGroups));
    int switches = 0;
    for (int d = 0; d < total; ++d) {
        const int group = sw[static_cast<std::size_t>(d)];
        if (groupSize[static_cast<std::size_t>(group)] < 2
            || !switchId[static_cast<std::size_t>(group)].empty())
            continue;
        switchId[static_cast<std::size_t>(group)] = "pex" + std::to_string(switches++);
        ServerDevice x;
        x.id = switchId[static_cast<std::size_t>(group)];
        x.kind = ServerDeviceKind::PcieSwitch;
        x.host = "cpu" + std::to_string(cpu[static_cast<std::size_t>(d)]);
        s.devices.push_back(x);
    }
    const auto hostOf = [&](int d) {
        const std::string &id = switchId[static_cast<std::size_t>(sw[static_cast<std::size_t>(d)])];
        return id.empty() ? "cpu" + std::to_string(cpu[static_cast<std::size_t>(d)]) : id;
    };
    for (int g = 0; g < gpus; ++g) {
        ServerDevice x;
        x.id = "gpu" + std::to_string(g);
        x.kind = ServerDeviceKind::Gpu;
        x.label = echo(m.gpus[static_cast<std::size_t>(g)].label, 30);
        x.c2c = c2c[static_cast<std::size_t>(g)];
        x.host = x.c2c ? "cpu" + std::to_string(cpu[static_cast<std::size_t>(g)]) : hostOf(g);
        s.devices.push_back(x);
    }
    for (std::size_t j = 0; j < nics.size(); ++j) {
        const ImportedNic &n = m.nics[static_cast<std::size_t>(nics[j])];
        ServerDevice x;
        x.id = "nic" + std::to_string(j);
        x.kind = ServerDeviceKind::Nic;
        x.label = echo(n.name.empty() ? n.label : n.name, 30);
        x.host = hostOf(gpus + static_cast<int>(j));
        if (n.gbitPerS > 0)
            x.gbps = std::clamp(n.gbitPerS, 1.0, 1e5);
        s.devices.push_back(x);
    }

    // NVLink: lanes into an NVSwitch fabric, or each pair's own bundle.
    if (m.nvlinkSwitched) {
        const int switchCount = std::max(1, spec.nvswitchesPerDomain);
        for (int k = 0; k < switchCount; ++k)
            s.devices.push_back({"nvs" + std::to_string(k),
                                 ServerDeviceKind::NvSwitch,
                                 {},
                                 {},
                                 false,
                                 {},
                                 {},
                                 {}});
        for (int g = 0; g < gpus; ++g) {
            const int lanes = m.gpus[static_cast<std::size_t>(g)].nvlinks;
            if (lanes <= 0)
                continue;
            // Spread as the generated HGX servers do (18 over 4: 5, 4, 4, 5).
            const int base = lanes / switchCount, extra = lanes % switchCount;
            for (int k = 0; k < switchCount; ++k) {
                const bool more = k < (extra + 1) / 2 || k >= switchCount - extra / 2;
                const int count = std::min(64, base + (more ? 1 : 0));
                if (count > 0)
                    s.links.push_back({"gpu" + std::to_string(g), "nvs" + std::to_string(k), count});
            }
        }
    } else {
        for (const ImportedLink &l : m.links)
            if (l.kind == "nvlink" && l.a >= 0 && l.b >= 0 && l.a < gpus && l.b < gpus && l.a != l.b)
                s.links.push_back({"gpu" + std::to_string(std::min(l.a, l.b)),
                                   "gpu" + std::to_string(std::max(l.a, l.b)),
                                   std::clamp(l.count, 1, 64)});
    }
    return s;
}

} // namespace railyard::engine
