// ClusterGeometry: what only explicit servers (layout format 2) need placed: the arcs of a
// direct NVLink mesh, and NICs over the GPUs whose traffic they carry.
#include "clustergeometry.h"
#include "clustergeometry_p.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace railyard {

using engine::DeviceKind;
using engine::LinkKind;

std::vector<std::pair<double, double>> ClusterGeometry::explicitNicSlots(int slots) const
{
    // Each NIC over the GPUs it carries (NICs that carry the same GPUs side by side over
    // them), when those spans do not overlap; otherwise (empty) the NICs are spread evenly.
    const engine::Topology &t = m_topology;
    const int gpn = t.shape().gpusPerNode;
    const int nics = t.shape().nicsPerNode;
    if (!t.shape().explicitServer || nics <= 0 || gpn <= 0 || t.nicCount() < nics)
        return {};
    const auto &devices = t.devices();
    std::vector<std::vector<int>> served(static_cast<std::size_t>(nics));
    for (int g = 0; g < gpn; ++g)
        for (int nic : t.gpuNics(g)) {
            const engine::Device &d = devices[static_cast<std::size_t>(nic)];
            if (d.node == 0 && d.local >= 0 && d.local < nics)
                served[static_cast<std::size_t>(d.local)].push_back(g);
        }
    std::map<std::vector<int>, std::vector<int>> groups; // served GPUs -> NICs
    for (int k = 0; k < nics; ++k) {
        if (served[static_cast<std::size_t>(k)].empty())
            return {};
        groups[served[static_cast<std::size_t>(k)]].push_back(k);
    }
    const double share = double(slots) / gpn;
    std::vector<std::pair<double, double>> out(static_cast<std::size_t>(nics));
    std::vector<std::pair<double, double>> spans;
    for (const auto &[gpus, group] : groups) {
        const auto [lo, hi] = std::minmax_element(gpus.begin(), gpus.end());
        const double left = *lo * share, right = (*hi + 1) * share;
        spans.emplace_back(left, right);
        const double pitch = (right - left) / double(group.size());
        const double w = std::min(kGpuW, pitch * kSlot - 8);
        if (w < 24)
            return {};
        for (std::size_t i = 0; i < group.size(); ++i)
            out[static_cast<std::size_t>(group[i])] = {left + pitch * (double(i) + 0.5), w};
    }
    std::sort(spans.begin(), spans.end());
    for (std::size_t i = 1; i < spans.size(); ++i)
        if (spans[i].first < spans[i - 1].second - 1e-9)
            return {};
    return out;
}

void ClusterGeometry::assignArcs()
{
    // A direct mesh (DGX-1's hybrid cube mesh, 4-GPU NV4 boards) draws each pair's bundle as an
    // arc under the GPU row. Each GPU's arcs leave its bottom edge spread out in the order of
    // their far ends, and arcs whose spans overlap go to different depths (short ones nearest
    // the GPUs), so every bundle can be followed and labelled.
    const engine::Topology &t = m_topology;
    if (!t.shape().directNvlink)
        return;
    const auto &devices = t.devices();
    m_arcLane.assign(static_cast<std::size_t>(t.linkCount()), -1);
    m_arcX.assign(2 * static_cast<std::size_t>(t.linkCount()), 0);
    const auto isArc = [&](int link) {
        const engine::Link &l = t.links()[static_cast<std::size_t>(link)];
        if (l.kind != LinkKind::NvLink
            || devices[static_cast<std::size_t>(l.a)].kind != DeviceKind::Gpu
            || devices[static_cast<std::size_t>(l.b)].kind != DeviceKind::Gpu)
            return false;
        const QRectF a = deviceRect(l.a), b = deviceRect(l.b);
        return std::abs(a.center().y() - b.center().y()) < 1
               && std::abs(a.center().x() - b.center().x()) > kGpuW;
    };
    int lanes = 0;
    double room = 1e9;
    for (int n = 0; n < nodeCount(); ++n) {
        std::vector<int> arcs;
        for (int link : nodeLinks(n))
            if (isArc(link))
                arcs.push_back(link);
        if (arcs.empty())
            continue;
        // Where each arc leaves each of its GPUs.
        for (int id : nodeDevices(n)) {
            if (devices[static_cast<std::size_t>(id)].kind != DeviceKind::Gpu)
                continue;
            std::vector<std::pair<double, std::size_t>> ends; // far end's x, slot in m_arcX
            for (int link : arcs) {
                const engine::Link &l = t.links()[static_cast<std::size_t>(link)];
                if (l.a == id || l.b == id)
                    ends.emplace_back(deviceRect(t.otherEnd(link, id)).center().x(),
                                      2 * static_cast<std::size_t>(link) + (l.a == id ? 0 : 1));
            }
            std::sort(ends.begin(), ends.end());
            const QRectF r = deviceRect(id);
            for (std::size_t i = 0; i < ends.size(); ++i)
                m_arcX[ends[i].second] = r.left() + 8
                                         + (r.width() - 16) * double(i + 1)
                                                   / double(ends.size() + 1);
        }
        // Depths: shortest first, each into the first lane it does not overlap.
        const auto span = [&](int link) {
            const double xa = m_arcX[2 * static_cast<std::size_t>(link)];
            const double xb = m_arcX[2 * static_cast<std::size_t>(link) + 1];
            return std::pair(std::min(xa, xb), std::max(xa, xb));
        };
        std::sort(arcs.begin(), arcs.end(), [&](int x, int y) {
            const auto [xl, xr] = span(x);
            const auto [yl, yr] = span(y);
            return std::pair(xr - xl, xl) < std::pair(yr - yl, yl);
        });
        std::vector<std::vector<std::pair<double, double>>> used;
        for (int link : arcs) {
            const auto [lo, hi] = span(link);
            std::size_t lane = 0;
            for (; lane < used.size(); ++lane)
                if (std::none_of(used[lane].begin(), used[lane].end(), [&](const auto &u) {
                        return lo < u.second + 6 && u.first < hi + 6;
                    }))
                    break;
            if (lane == used.size())
                used.emplace_back();
            used[lane].emplace_back(lo, hi);
            m_arcLane[static_cast<std::size_t>(link)] = static_cast<int>(lane);
        }
        lanes = std::max(lanes, static_cast<int>(used.size()));
        const QRectF gpu = deviceRect(t.links()[static_cast<std::size_t>(arcs.front())].a);
        room = std::min(room, nodeRect(n).bottom() - gpu.bottom() - 12);
    }
    if (lanes > 0)
        m_arcSpacing = std::clamp(room / lanes, 3.0, 13.0);
}

void ClusterGeometry::placeExplicitHosts(int n, double hostY, double switchY, double side)
{
    // An explicit server's PCIe switches sit over the GPUs and NICs below them in the tree,
    // its CPUs at the ends of the PCIe row (as in the generated servers), its NVSwitches spread
    // under the GPUs.
    const engine::Topology &t = m_topology;
    const QRectF node = m_node[static_cast<std::size_t>(n)];
    std::vector<int> nvswitches, cpus;
    struct Span
    {
        double left = 1e18, right = -1e18;
    };
    std::vector<std::pair<int, Span>> switches;
    for (int id : nodeDevices(n)) {
        const DeviceKind k = t.devices()[static_cast<std::size_t>(id)].kind;
        if (k == DeviceKind::NvSwitch)
            nvswitches.push_back(id);
        else if (k == DeviceKind::Cpu)
            cpus.push_back(id);
        else if (k == DeviceKind::PcieSwitch)
            switches.emplace_back(id, Span{});
    }
    for (int id : nodeDevices(n)) {
        const DeviceKind k = t.devices()[static_cast<std::size_t>(id)].kind;
        if (k != DeviceKind::Gpu && k != DeviceKind::Nic)
            continue;
        const QRectF r = m_device[static_cast<std::size_t>(id)];
        for (int d = id, link = t.hostLink(id); link >= 0; link = t.hostLink(d)) {
            d = t.otherEnd(link, d);
            for (auto &[sw, span] : switches)
                if (sw == d) {
                    span.left = std::min(span.left, r.left());
                    span.right = std::max(span.right, r.right());
                }
        }
    }
    for (const auto &[sw, span] : switches) {
        const double centre = span.right > span.left ? (span.left + span.right) / 2
                                                     : node.center().x();
        const double w = std::clamp(span.right - span.left, kGpuW, kSlot * 4.0);
        m_device[static_cast<std::size_t>(sw)] = QRectF(centre - w / 2, hostY, w, kSwitchH);
    }
    const double cpuW = 56;
    for (std::size_t k = 0; k < cpus.size(); ++k) {
        // Two sockets at the two ends; more stack at the ends.
        const bool left = k % 2 == 0 || cpus.size() == 1;
        const double h = cpus.size() > 2 ? kSwitchH / 2 : kSwitchH;
        m_device[static_cast<std::size_t>(cpus[k])]
                = QRectF(left ? node.left() + geometry_detail::kServerPad
                              : node.right() - geometry_detail::kServerPad - cpuW,
                         hostY + (cpus.size() > 2 ? double(k / 2) * (h + 2) : 0.0),
                         cpuW,
                         h);
    }
    const double usable = node.width() - 2 * geometry_detail::kServerPad - 2 * side;
    const double pitch = usable / std::max<std::size_t>(1, nvswitches.size());
    const double w = std::min(pitch - 16, 150.0);
    for (std::size_t k = 0; k < nvswitches.size(); ++k)
        m_device[static_cast<std::size_t>(nvswitches[k])]
                = QRectF(node.left() + geometry_detail::kServerPad + side + k * pitch
                                 + (pitch - w) / 2,
                         switchY,
                         w,
                         kSwitchH);
}

} // namespace railyard
