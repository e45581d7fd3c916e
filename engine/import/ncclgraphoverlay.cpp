#include "import/ncclgraphoverlay.h"

#include "base/inputerror.h"
#include "base/jsoncursor.h"

#include <algorithm>
#include <deque>
#include <map>

namespace railyard::engine {

namespace {

bool isTreePattern(int code)
{
    return code != 4; // everything but a ring runs as a chain inside and a tree between servers
}

// Breadth-first paths over the topology, with visit stamps so that many searches on a large
// cluster do not clear a device-sized array each time.
class PathFinder
{
public:
    explicit PathFinder(const Topology &t)
        : m_t(t)
        , m_stamp(static_cast<std::size_t>(t.deviceCount()), 0)
        , m_via(static_cast<std::size_t>(t.deviceCount()), -1)
    {}

    // Links from `from` to `to`, in order, through devices `pass` allows (the ends always are);
    // `rotate` turns the order the source's links are tried in, so channels spread over
    // NVSwitches. Empty when there is no path.
    template<typename LinkOk, typename Pass>
    std::vector<int> find(int from, int to, int rotate, LinkOk linkOk, Pass pass)
    {
        if (from == to)
            return {};
        ++m_round;
        std::deque<int> queue{from};
        m_stamp[static_cast<std::size_t>(from)] = m_round;
        while (!queue.empty()) {
            const int d = queue.front();
            queue.pop_front();
            // The links this search may take from here; from the source, started at `rotate`.
            m_links.clear();
            for (int l : m_t.linksOf(d))
                if (linkOk(m_t.links()[static_cast<std::size_t>(l)]))
                    m_links.push_back(l);
            const std::size_t n = m_links.size();
            const std::size_t start = d == from && n > 0 ? static_cast<std::size_t>(rotate) % n : 0;
            for (std::size_t k = 0; k < n; ++k) {
                const int l = m_links[(start + k) % n];
                const int next = m_t.otherEnd(l, d);
                const std::size_t ni = static_cast<std::size_t>(next);
                if (m_stamp[ni] == m_round || (next != to && !pass(next)))
                    continue;
                m_stamp[ni] = m_round;
                m_via[ni] = l;
                if (next == to)
                    return walkBack(from, to);
                queue.push_back(next);
            }
        }
        return {};
    }

private:
    std::vector<int> walkBack(int from, int to) const
    {
        std::vector<int> out;
        for (int d = to; d != from;) {
            const int l = m_via[static_cast<std::size_t>(d)];
            out.push_back(l);
            d = m_t.otherEnd(l, d);
        }
        std::reverse(out.begin(), out.end());
        return out;
    }

    const Topology &m_t;
    std::vector<unsigned> m_stamp;
    std::vector<int> m_via;
    std::vector<int> m_links;
    unsigned m_round = 0;
};

class Placer
{
public:
    Placer(const NcclGraph &g, const Topology &t, const std::string &file)
        : m_g(g)
        , m_t(t)
        , m_file(file)
        , m_paths(t)
    {
        const int nodes = t.shape().nodes;
        m_nics.resize(static_cast<std::size_t>(std::max(0, nodes)));
        for (int i = 0; i < t.nicCount(); ++i) {
            const int d = t.nicDevice(i);
            const int node = t.devices()[static_cast<std::size_t>(d)].node;
            if (node >= 0 && node < nodes)
                m_nics[static_cast<std::size_t>(node)].push_back(d);
        }
    }

    [[noreturn]] void fail(std::size_t channel, const std::string &what) const
    {
        throw InputError(m_file,
                         "graph " + std::to_string(m_g.id) + ", channel " + std::to_string(channel),
                         what);
    }

    // Checks a channel against the servers before anything is routed.
    void check(std::size_t c, const NcclChannel &ch, bool multiServer) const
    {
        const int gpn = m_t.shape().gpusPerNode;
        if (ch.gpus.empty())
            fail(c, "the channel names no GPU");
        for (int d : ch.gpus)
            if (d < 0 || d >= gpn)
                fail(c,
                     "names GPU " + std::to_string(d) + ", but the layout's servers have "
                             + std::to_string(gpn) + " GPUs (GPU 0 to " + std::to_string(gpn - 1)
                             + ")");
        const int nics = m_nics.empty() ? 0 : static_cast<int>(m_nics.front().size());
        for (int k : ch.nets)
            if (k < 0 || k >= nics)
                fail(c,
                     "leaves the server through NET " + std::to_string(k) + ", but the layout's "
                             + (nics == 0 ? std::string("servers have no NIC")
                                          : "servers have " + std::to_string(nics)
                                                    + " NICs (NET 0 to " + std::to_string(nics - 1)
                                                    + ")"));
        if (multiServer && !ch.nets.empty()) {
            const int nic = m_t.devices()[static_cast<std::size_t>(m_nics[0][0])].index;
            if (m_t.nicUplink(nic) < 0)
                fail(c,
                     "leaves the server through NET " + std::to_string(ch.nets.front())
                             + ", but the layout has no fabric between its servers");
        }
    }

    int gpu(int node, int dev) const { return m_t.gpuDevice(node * m_t.shape().gpusPerNode + dev); }
    int nic(int node, int net) const
    {
        return m_nics[static_cast<std::size_t>(node)][static_cast<std::size_t>(net)];
    }

    // GPU to GPU inside a server: over NVLink (through one NVSwitch, chosen by the channel, or
    // the pair's direct bundle), else over the PCIe tree (and the CPUs' SMP link).
    GraphEdge gpuToGpu(std::size_t c, int a, int b)
    {
        GraphEdge e{a, b, {}};
        const auto &devices = m_t.devices();
        e.links = m_paths.find(
                a,
                b,
                static_cast<int>(c),
                [](const Link &l) { return l.kind == LinkKind::NvLink; },
                [&](int d) {
                    return devices[static_cast<std::size_t>(d)].kind == DeviceKind::NvSwitch;
                });
        if (e.links.empty())
            e.links = pcie(a, b);
        if (e.links.empty())
            fail(c,
                 "no route between " + m_t.deviceName(a) + " and " + m_t.deviceName(b)
                         + " in the layout");
        return e;
    }

    // Inside one server, off NVLink: GPU or NIC up the PCIe tree and down again.
    std::vector<int> pcie(int a, int b)
    {
        const auto &devices = m_t.devices();
        const int node = devices[static_cast<std::size_t>(a)].node;
        return m_paths.find(
                a,
                b,
                0,
                [](const Link &l) { return l.kind == LinkKind::Pcie || l.kind == LinkKind::C2C; },
                [&](int d) {
                    const Device &dev = devices[static_cast<std::size_t>(d)];
                    return dev.node == node
                           && (dev.kind == DeviceKind::PcieSwitch || dev.kind == DeviceKind::Cpu);
                });
    }

    GraphEdge local(std::size_t c, int a, int b)
    {
        GraphEdge e{a, b, pcie(a, b)};
        if (e.links.empty())
            fail(c, "no PCIe route between " + m_t.deviceName(a) + " and " + m_t.deviceName(b));
        return e;
    }

    // NIC to NIC over the fabric: up to its leaf, across the spine (and core) where the leaves
    // differ, down to the other NIC. Leaf-to-leaf routes are remembered.
    GraphEdge fabric(std::size_t c, int nicA, int nicB)
    {
        const auto &devices = m_t.devices();
        const int upA = m_t.nicUplink(devices[static_cast<std::size_t>(nicA)].index);
        const int upB = m_t.nicUplink(devices[static_cast<std::size_t>(nicB)].index);
        if (upA < 0 || upB < 0)
            fail(c, "no fabric between " + m_t.deviceName(nicA) + " and " + m_t.deviceName(nicB));
        const int leafA = m_t.otherEnd(upA, nicA);
        const int leafB = m_t.otherEnd(upB, nicB);
        GraphEdge e{nicA, nicB, {upA}};
        if (leafA != leafB) {
            auto [it, fresh] = m_leafPaths.try_emplace({leafA, leafB});
            if (fresh)
                it->second = m_paths.find(
                        leafA,
                        leafB,
                        0,
                        [](const Link &l) {
                            return l.kind == LinkKind::Ib || l.kind == LinkKind::Ethernet;
                        },
                        [&](int d) {
                            const DeviceKind k = devices[static_cast<std::size_t>(d)].kind;
                            return k == DeviceKind::Spine || k == DeviceKind::Core;
                        });
            if (it->second.empty())
                fail(c,
                     "no route through the fabric from " + m_t.deviceName(nicA) + " to "
                             + m_t.deviceName(nicB));
            e.links.insert(e.links.end(), it->second.begin(), it->second.end());
        }
        e.links.push_back(upB);
        return e;
    }

    GraphChannelPath ring(std::size_t c, const NcclChannel &ch, int servers)
    {
        GraphChannelPath p;
        p.channel = static_cast<int>(c);
        const bool leaves = !ch.nets.empty();
        for (int s = 0; s < servers; ++s) {
            if (leaves)
                p.edges.push_back(local(c, nic(s, ch.nets.front()), gpu(s, ch.gpus.front())));
            for (std::size_t i = 0; i < ch.gpus.size(); ++i) {
                p.gpus.push_back(s * m_t.shape().gpusPerNode + ch.gpus[i]);
                if (i + 1 < ch.gpus.size())
                    p.edges.push_back(gpuToGpu(c, gpu(s, ch.gpus[i]), gpu(s, ch.gpus[i + 1])));
            }
            if (leaves) {
                p.edges.push_back(local(c, gpu(s, ch.gpus.back()), nic(s, ch.nets.back())));
                if (servers > 1)
                    p.edges.push_back(fabric(c,
                                             nic(s, ch.nets.back()),
                                             nic((s + 1) % servers, ch.nets.front())));
            } else if (ch.gpus.size() > 2) {
                p.edges.push_back(gpuToGpu(c, gpu(s, ch.gpus.back()), gpu(s, ch.gpus.front())));
            }
        }
        return p;
    }

    GraphChannelPath tree(std::size_t c, const NcclChannel &ch, int servers)
    {
        GraphChannelPath p;
        p.channel = static_cast<int>(c);
        const bool leaves = !ch.nets.empty();
        // The GPUs that talk to the parent server and to the children (NCCL's treeToParent,
        // treeToChild0 and treeToChild1 for the pattern).
        const std::size_t last = ch.gpus.size() - 1;
        const std::size_t child0 = m_g.pattern == "tree" ? 0 : std::min<std::size_t>(1, last);
        const std::size_t child1 = m_g.pattern == "split-tree" ? std::min<std::size_t>(1, last) : 0;
        for (int s = 0; s < servers; ++s) {
            if (leaves && servers == 1)
                p.edges.push_back(local(c, nic(s, ch.nets.front()), gpu(s, ch.gpus.front())));
            for (std::size_t i = 0; i < ch.gpus.size(); ++i) {
                p.gpus.push_back(s * m_t.shape().gpusPerNode + ch.gpus[i]);
                if (i + 1 < ch.gpus.size())
                    p.edges.push_back(gpuToGpu(c, gpu(s, ch.gpus[i]), gpu(s, ch.gpus[i + 1])));
            }
            if (!leaves || s == 0 || servers == 1)
                continue;
            // NCCL's binary tree over the servers (trees.cc, ncclGetBtree): the parent of s.
            int bit = 1;
            while (bit < servers && !(bit & s))
                bit <<= 1;
            int parent = (s ^ bit) | (bit << 1);
            if (parent >= servers)
                parent = s ^ bit;
            const int from = gpu(parent, ch.gpus[s < parent ? child0 : child1]);
            p.edges.push_back(local(c, from, nic(parent, ch.nets.back())));
            p.edges.push_back(fabric(c, nic(parent, ch.nets.back()), nic(s, ch.nets.front())));
            p.edges.push_back(local(c, nic(s, ch.nets.front()), gpu(s, ch.gpus.front())));
        }
        return p;
    }

private:
    const NcclGraph &m_g;
    const Topology &m_t;
    const std::string &m_file;
    PathFinder m_paths;
    std::vector<std::vector<int>> m_nics; // per server: NIC device ids in order
    std::map<std::pair<int, int>, std::vector<int>> m_leafPaths;
};

} // namespace

std::vector<int> GraphChannelPath::links() const
{
    std::vector<int> out;
    for (const GraphEdge &e : edges)
        out.insert(out.end(), e.links.begin(), e.links.end());
    return out;
}

int ncclPatternCode(const std::string &pattern)
{
    static const char *names[]
            = {"", "balanced-tree", "split-tree", "tree", "ring", "nvls", "collnet-direct"};
    for (int i = 1; i < 7; ++i)
        if (pattern == names[i])
            return i;
    return 0;
}

std::string NcclGraphOverlay::caption() const
{
    const int gpus = channels.empty() ? 0
                                      : static_cast<int>(channels.front().gpus.size())
                                                / std::max(1, servers);
    std::string s = "NCCL graph from " + echo(file) + ": " + std::to_string(channels.size()) + " "
                    + (pattern.empty() ? std::string("unnamed") : echo(pattern)) + " channel"
                    + (channels.size() == 1 ? "" : "s");
    if (patternCode > 0)
        s += " (pattern " + std::to_string(patternCode) + ")";
    s += ", " + std::to_string(gpus) + " GPU" + (gpus == 1 ? "" : "s") + " per server";
    if (leaves)
        s += servers > 1 ? ", through the NETs across " + std::to_string(servers) + " servers"
                         : ", leaving the server through its NETs";
    else
        s += ", inside server 0";
    return s;
}

NcclGraphOverlay overlayNcclGraph(const NcclGraph &graph,
                                  const Topology &topology,
                                  const std::string &file)
{
    NcclGraphOverlay out;
    out.file = file;
    out.graphId = graph.id;
    out.pattern = graph.pattern;
    out.patternCode = ncclPatternCode(graph.pattern);
    out.tree = isTreePattern(out.patternCode);
    for (const NcclChannel &ch : graph.channels)
        out.leaves = out.leaves || !ch.nets.empty();
    const int nodes = topology.shape().nodes;
    if (nodes <= 0 || topology.shape().gpusPerNode <= 0)
        throw InputError(file, "graph " + std::to_string(graph.id), "the layout has no GPU");
    if (graph.channels.empty())
        throw InputError(file, "graph " + std::to_string(graph.id), "the graph has no channel");
    out.servers = out.leaves ? nodes : 1;
    Placer placer(graph, topology, file);
    for (std::size_t c = 0; c < graph.channels.size(); ++c)
        placer.check(c, graph.channels[c], out.servers > 1);
    out.channels.reserve(graph.channels.size());
    for (std::size_t c = 0; c < graph.channels.size(); ++c)
        out.channels.push_back(out.tree ? placer.tree(c, graph.channels[c], out.servers)
                                        : placer.ring(c, graph.channels[c], out.servers));
    return out;
}

std::vector<NcclGraph> graphsFromImported(const Json &imported)
{
    std::vector<NcclGraph> out;
    if (!imported.is_object())
        return out;
    const auto summary = imported.find("summary");
    const Json *graphs = nullptr;
    if (const auto it = imported.find("graphs"); it != imported.end())
        graphs = &*it;
    else if (summary != imported.end() && summary->is_object())
        if (const auto jt = summary->find("graphs"); jt != summary->end())
            graphs = &*jt;
    if (!graphs || !graphs->is_array())
        return out;
    const auto ints = [](const Json &j, const char *key, std::vector<int> &into) {
        const auto it = j.find(key);
        if (it == j.end() || !it->is_array())
            return false;
        for (const Json &v : *it) {
            if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() > 65535)
                return false;
            into.push_back(v.get<int>());
        }
        return true;
    };
    for (const Json &g : *graphs) {
        if (!g.is_object())
            return {};
        NcclGraph graph;
        if (const auto it = g.find("id"); it != g.end() && it->is_number_integer())
            graph.id = it->get<int>();
        if (const auto it = g.find("pattern"); it != g.end() && it->is_string())
            graph.pattern = it->get<std::string>();
        if (const auto it = g.find("type_intra"); it != g.end() && it->is_string())
            graph.typeIntra = it->get<std::string>();
        if (const auto it = g.find("type_inter"); it != g.end() && it->is_string())
            graph.typeInter = it->get<std::string>();
        if (const auto it = g.find("speed_intra_gbps"); it != g.end() && it->is_number())
            graph.speedIntra = it->get<double>();
        if (const auto it = g.find("speed_inter_gbps"); it != g.end() && it->is_number())
            graph.speedInter = it->get<double>();
        const auto channels = g.find("channels");
        if (channels == g.end() || !channels->is_array() || channels->size() > 4096)
            return {};
        for (const Json &c : *channels) {
            NcclChannel ch;
            if (!c.is_object() || !ints(c, "gpus", ch.gpus) || !ints(c, "nets", ch.nets))
                return {};
            graph.channels.push_back(std::move(ch));
        }
        out.push_back(std::move(graph));
    }
    return out;
}

} // namespace railyard::engine
