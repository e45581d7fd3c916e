#include "faults/railsymmetry.h"

#include "base/inputerror.h"
#include "layout/parallel.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

namespace railyard::engine {

namespace {

// A link as the device at one end sees it, the other end named by `other`.
using LinkShape = std::tuple<long, int, double, double, double, double>;

LinkShape shapeOf(const Link &k, long other)
{
    return {other, static_cast<int>(k.kind), k.gbPerS, k.efficiency, k.lanes, k.health};
}

RailSymmetry no(std::string why)
{
    return {false, std::move(why)};
}

// The job: each TP group one whole server, TP rank = the GPU's place in it.
RailSymmetry jobIsRailAligned(const Layout &layout, const Topology &t)
{
    if (layout.isServing())
        return no("a serving layout");
    if (!layout.cluster.faults.empty() || t.hasFaults())
        return no("the layout has faults of its own");
    if (layout.parallel.ep != 1 || layout.parallel.etp.value_or(1) != 1)
        return no("expert parallelism");
    std::unique_ptr<RankLayout> ranks;
    try {
        ranks = std::make_unique<RankLayout>(layout);
    } catch (const InputError &) {
        return no("the job's ranks do not describe the cluster");
    }
    const int perNode = t.shape().gpusPerNode;
    if (ranks->size(Dim::TP) != perNode)
        return no("TP does not fill a server");
    for (int node = 0; node < t.shape().nodes; ++node) {
        const int first = ranks->rankOfGpu(node * perNode);
        for (int local = 0; local < perNode; ++local) {
            const int g = node * perNode + local;
            const int r = ranks->rankOfGpu(g);
            if ((r < 0) != (first < 0))
                return no("a server is partly idle");
            if (r < 0)
                continue;
            if (ranks->coord(r, Dim::TP) != local
                || ranks->groupOf(r, Dim::TP) != ranks->groupOf(first, Dim::TP))
                return no("a TP group is not one server in the GPUs' order");
        }
    }
    return {true, {}};
}

} // namespace

RailSymmetry railSymmetry(const Layout &layout, const Topology &t)
{
    if (RailSymmetry job = jobIsRailAligned(layout, t); !job.holds)
        return job;
    const ClusterShape &shape = t.shape();
    const int perNode = shape.gpusPerNode;
    if (t.nicCount() != t.gpuCount())
        return no("not one NIC per GPU");
    if (shape.domainSize != perNode)
        return no("the NVLink domain is not one server");
    const auto &devices = t.devices();
    const auto &links = t.links();
    const auto link = [&](int l) -> const Link & { return links[static_cast<std::size_t>(l)]; };
    const auto device = [&](int d) -> const Device & {
        return devices[static_cast<std::size_t>(d)];
    };

    // The switches and CPUs of each server.
    std::vector<std::vector<int>> cpus(static_cast<std::size_t>(shape.nodes));
    for (int d = 0; d < t.deviceCount(); ++d)
        if (device(d).kind == DeviceKind::Cpu && device(d).node >= 0 && device(d).node < shape.nodes)
            cpus[static_cast<std::size_t>(device(d).node)].push_back(d);

    std::optional<LinkShape> gpuHost, nicHost, hostUp, nicUp;
    const auto alike = [](std::optional<LinkShape> &first, const LinkShape &s) {
        if (!first)
            first = s;
        return *first == s;
    };
    // Leaf of (scalable unit, rail), from the first server of each unit.
    std::map<std::pair<int, int>, int> leafOf;
    for (int node = 0; node < shape.nodes; ++node) {
        std::map<int, int> gpusUnder;     // host (switch or CPU) -> GPUs under it
        std::map<int, int> switchesUnder; // CPU -> switches under it
        std::vector<LinkShape> nvlinks0;  // the first GPU's NVLinks
        int domain = -1, unit = -1;
        for (int local = 0; local < perNode; ++local) {
            const int g = node * perNode + local;
            const int gd = t.gpuDevice(g);
            const int nic = node * perNode + local;
            const auto own = t.gpuNics(g);
            if (own.size() != 1 || own[0] != t.nicDevice(nic))
                return no("a GPU's NIC is not the one of its place");
            const int hl = t.gpuHostLink(g), nl = t.nicHostLink(nic);
            if (hl < 0 || nl < 0)
                return no("a GPU or NIC without a host link");
            const int host = t.otherEnd(hl, gd);
            if (t.otherEnd(nl, t.nicDevice(nic)) != host)
                return no("a NIC not under its GPU's PCIe switch");
            if (!alike(gpuHost, shapeOf(link(hl), 0)) || !alike(nicHost, shapeOf(link(nl), 0)))
                return no("the GPUs' or NICs' host links differ");
            if (gpusUnder[host]++ == 0 && device(host).kind != DeviceKind::Cpu) {
                const int up = t.hostLink(host);
                if (up < 0 || device(t.otherEnd(up, host)).kind != DeviceKind::Cpu)
                    return no("a PCIe switch not under a CPU");
                if (!alike(hostUp, shapeOf(link(up), 0)))
                    return no("the PCIe switches' uplinks differ");
                ++switchesUnder[t.otherEnd(up, host)];
            }
            // NVLink: to NVSwitches only, each GPU joined to the same ones the same way.
            std::vector<LinkShape> nv;
            for (int l : t.gpuNvlinks(g)) {
                const int other = t.otherEnd(l, gd);
                if (device(other).kind != DeviceKind::NvSwitch)
                    return no("NVLinks between GPUs (a mesh, not NVSwitches)");
                nv.push_back(shapeOf(link(l), other));
            }
            std::sort(nv.begin(), nv.end());
            if (local == 0) {
                nvlinks0 = std::move(nv);
                domain = t.localDomainOfGpu(g);
            } else if (nv != nvlinks0 || t.localDomainOfGpu(g) != domain) {
                return no("the GPUs of a server are joined to NVLink differently");
            }
            // The fabric: NIC k of every server of a unit on the unit's leaf of rail k.
            const int up = t.nicUplink(nic);
            const int leaf = t.leafOfNic(nic);
            if (up < 0 || leaf < 0)
                return no("no fabric");
            if (!alike(nicUp, shapeOf(link(up), 0)))
                return no("the NICs' uplinks differ");
            const int leafUnit = device(t.leafDevice(leaf)).group;
            if (local == 0)
                unit = leafUnit;
            else if (leafUnit != unit)
                return no("a server's NICs on leaves of different units");
            const auto [it, added] = leafOf.emplace(std::pair{unit, local}, leaf);
            if (!added && it->second != leaf)
                return no("the servers of a unit put a rail on different leaves");
        }
        // Switches alike, CPUs alike (at most two, so a swap of the two is one).
        int held = -1;
        for (const auto &entry : gpusUnder)
            if (const int before = std::exchange(held, entry.second); before >= 0 && before != held)
                return no("PCIe switches hold different numbers of GPUs");
        const auto &mine = cpus[static_cast<std::size_t>(node)];
        if (mine.size() > 2)
            return no("more than two CPUs in a server");
        held = -1;
        for (const int c : mine) {
            const auto it = switchesUnder.find(c);
            const int n = it == switchesUnder.end() ? 0 : it->second;
            if (const int before = std::exchange(held, n); before >= 0 && before != held)
                return no("CPUs hold different numbers of PCIe switches");
        }
    }
    // A unit's rails on distinct leaves, and its leaves joined to the spines alike (each leaf's
    // links other than its NICs').
    std::map<int, std::vector<int>> leavesOfUnit;
    for (const auto &[key, leaf] : leafOf)
        leavesOfUnit[key.first].push_back(leaf);
    for (const auto &unitLeaves : leavesOfUnit) {
        const std::vector<int> &leaves = unitLeaves.second;
        std::vector<int> sorted = leaves;
        std::sort(sorted.begin(), sorted.end());
        if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
            return no("two rails of a unit on one leaf");
        std::optional<std::vector<LinkShape>> first;
        std::optional<std::size_t> degree;
        for (const int leaf : leaves) {
            const int ld = t.leafDevice(leaf);
            std::vector<LinkShape> up;
            for (int l : t.linksOf(ld)) {
                const int other = t.otherEnd(l, ld);
                if (device(other).kind != DeviceKind::Nic)
                    up.push_back(shapeOf(link(l), other));
            }
            std::sort(up.begin(), up.end());
            if (!first)
                first = up;
            if (*first != up)
                return no("the leaves of a unit are joined to the spines differently");
            if (!degree)
                degree = t.linksOf(ld).size();
            if (*degree != t.linksOf(ld).size())
                return no("the leaves of a unit hold different numbers of links");
        }
    }
    return {true, {}};
}

} // namespace railyard::engine
