#include "import/nccltopofilter.h"

#include "base/inputerror.h"
#include "base/jsoncursor.h"
#include "base/units.h"
#include "import/importtext.h"

#include <cmath>
#include <map>
#include <set>

namespace railyard::engine {

namespace {

constexpr int kMaxDevicesPerFile = 4096;

struct Walker
{
    const std::string &file;
    ImportedMachine &m;
    std::map<std::string, int> gpuByBus;
    std::set<std::string> nicNames;
    std::set<std::string> switchTargets;
    std::set<int> numas;
    struct PendingLink
    {
        int gpu;
        std::string target;
        std::string tclass;
        int count;
        int line;
    };
    std::vector<PendingLink> nvlinks;
    int currentSwitch = -1; // the top PCIe switch being walked (-1: directly under the CPU)
    int nextSwitch = 0;

    [[noreturn]] void fail(const XmlElement &e, const std::string &msg) const
    {
        throw InputError(file, lineRef(static_cast<std::size_t>(e.line)), msg);
    }

    long long intAttr(const XmlElement &e,
                      const char *key,
                      long long lo,
                      long long hi,
                      long long fallback) const
    {
        const std::string *v = e.attribute(key);
        if (!v || v->empty())
            return fallback;
        // The range first: converting a double beyond long long's (count="1e20") to one is
        // undefined behaviour, so the cast comes only after the check.
        double d = 0;
        if (!parseFiniteDouble(*v, d) || d < static_cast<double>(lo) || d > static_cast<double>(hi)
            || d != std::floor(d))
            fail(e,
                 "<" + e.name + " " + key + "=" + quote(*v) + ">: expected an integer from "
                         + std::to_string(lo) + " to " + std::to_string(hi));
        return static_cast<long long>(d);
    }

    // "0x030200" -> 0x030200; -1 if absent.
    long classOf(const XmlElement &e) const
    {
        const std::string *v = e.attribute("class");
        if (!v)
            return -1;
        std::string s = *v;
        if (s.rfind("0x", 0) == 0 || s.rfind("0X", 0) == 0)
            s = s.substr(2);
        if (s.empty() || s.size() > 6)
            fail(e, "<pci class=" + quote(*v) + ">: expected a 24-bit PCI class code like 0x030200");
        long value = 0;
        for (char c : s) {
            int d = -1;
            if (c >= '0' && c <= '9')
                d = c - '0';
            else if (c >= 'a' && c <= 'f')
                d = c - 'a' + 10;
            else if (c >= 'A' && c <= 'F')
                d = c - 'A' + 10;
            if (d < 0)
                fail(e, "<pci class=" + quote(*v) + ">: expected a hexadecimal PCI class code");
            value = value * 16 + d;
        }
        return value;
    }

    void addGpu(const XmlElement &pci, const XmlElement *gpu, int numa)
    {
        if (static_cast<int>(m.gpus.size()) >= kMaxDevicesPerFile)
            fail(pci, "more than " + std::to_string(kMaxDevicesPerFile) + " GPUs");
        ImportedGpu g;
        g.busId = pci.attributeOr("busid");
        g.label = g.busId;
        const std::string vendor = pci.attributeOr("vendor"), device = pci.attributeOr("device");
        if (!device.empty())
            g.model = (vendor.empty() ? "" : vendor + ":") + device;
        g.numa = numa;
        g.pcieSwitch = currentSwitch;
        g.line = gpu ? gpu->line : pci.line;
        if (gpu) {
            g.sm = static_cast<int>(intAttr(*gpu, "sm", 0, 10000, 0));
            const long long dev = intAttr(*gpu, "dev", 0, kMaxDevicesPerFile, -1);
            if (dev >= 0)
                g.label = "GPU" + std::to_string(dev);
        }
        const int id = static_cast<int>(m.gpus.size());
        if (!g.busId.empty() && !gpuByBus.emplace(g.busId, id).second)
            fail(pci, "the GPU bus id " + quote(g.busId) + " appears twice");
        m.gpus.push_back(g);
        if (gpu)
            for (const XmlElement &c : gpu->children) {
                if (c.name == "nvlink") {
                    const int count = static_cast<int>(intAttr(c, "count", 0, 1000, 1));
                    nvlinks.push_back(
                            {id, c.attributeOr("target"), c.attributeOr("tclass"), count, c.line});
                } else if (c.name == "c2c") {
                    const int count = static_cast<int>(intAttr(c, "count", 0, 1000, 1));
                    intAttr(c, "bw", 0, 100000000, 0);
                    m.links.push_back({id, -1, "c2c", count});
                }
            }
    }

    void addNet(const XmlElement &net, int numa, const std::string &busId, int parentGpuHint)
    {
        std::string name = net.attributeOr("name");
        if (name.empty())
            name = "net" + net.attributeOr("dev", std::to_string(m.nics.size()));
        if (!nicNames.insert(name).second)
            return; // the same socket NIC listed under both CPUs
        if (static_cast<int>(m.nics.size()) >= kMaxDevicesPerFile)
            fail(net, "more than " + std::to_string(kMaxDevicesPerFile) + " NICs");
        ImportedNic n;
        n.label = name;
        n.name = name;
        n.busId = busId;
        n.numa = numa;
        n.nearestGpu = parentGpuHint;
        n.pcieSwitch = currentSwitch;
        const long long speed = intAttr(net, "speed", -1000000000LL, 100000000LL, 0);
        n.gbitPerS = speed > 0 ? static_cast<double>(speed) / 1000.0 : 10.0;
        if (const std::string *lat = net.attribute("latency")) {
            double d = 0;
            if (!lat->empty() && (!parseFiniteDouble(*lat, d) || d < 0 || d > 1e6))
                fail(net, "<net latency=" + quote(*lat) + ">: expected microseconds");
        }
        m.nics.push_back(n);
    }

    // The first GPU found under `e` (a switch's GPU, for a NIC's nearest GPU).
    int firstGpuUnder(std::size_t gpusBefore) const
    {
        return m.gpus.size() > gpusBefore ? static_cast<int>(gpusBefore) : -1;
    }

    void pci(const XmlElement &e, int numa, int depth, int switchGpu)
    {
        const long cls = classOf(e);
        const std::string bus = e.attributeOr("busid");
        bool hasGpu = false, hasNic = false;
        for (const XmlElement &c : e.children) {
            hasGpu |= c.name == "gpu";
            hasNic |= c.name == "nic";
        }
        if (hasGpu || (cls >> 16) == 0x03) {
            const XmlElement *gpu = nullptr;
            for (const XmlElement &c : e.children)
                if (c.name == "gpu")
                    gpu = &c;
            addGpu(e, gpu, numa);
            m.links.push_back({static_cast<int>(m.gpus.size()) - 1, -1, "pcie", 1});
            return;
        }
        if (hasNic || (cls >> 16) == 0x02) {
            bool any = false;
            for (const XmlElement &c : e.children)
                if (c.name == "nic")
                    for (const XmlElement &n : c.children)
                        if (n.name == "net") {
                            addNet(n, numa, bus, switchGpu);
                            any = true;
                        }
            if (!any) {
                XmlElement fake;
                fake.name = "net";
                fake.line = e.line;
                fake.attributes.emplace_back("name", bus.empty() ? "nic" : bus);
                addNet(fake, numa, bus, switchGpu);
            }
            m.links.push_back({static_cast<int>(m.gpus.size()) + static_cast<int>(m.nics.size()) - 1,
                               -1,
                               "pcie",
                               1});
            return;
        }
        if (cls == 0x068000) {
            ++m.nvswitches;
            return;
        }
        // A bridge or switch: walk below, then see whether it holds devices. Devices below a
        // switch under the CPU are numbered by that top switch.
        const int outerSwitch = currentSwitch;
        if (depth == 1)
            currentSwitch = nextSwitch++;
        const std::size_t gpusBefore = m.gpus.size();
        std::vector<const XmlElement *> later;
        for (const XmlElement &c : e.children) {
            if (c.name == "pci") {
                // GPUs first so NICs under the same switch find them.
                bool isNic = false;
                for (const XmlElement &cc : c.children)
                    isNic |= cc.name == "nic";
                const long cc = classOf(c);
                if (isNic || (cc >> 16) == 0x02)
                    later.push_back(&c);
                else
                    pci(c, numa, depth + 1, switchGpu);
            } else if (c.name == "nic") {
                for (const XmlElement &n : c.children)
                    if (n.name == "net")
                        addNet(n, numa, bus, firstGpuUnder(gpusBefore));
            }
        }
        for (const XmlElement *c : later)
            pci(*c, numa, depth + 1, firstGpuUnder(gpusBefore));
        currentSwitch = outerSwitch;
        if (m.gpus.size() > gpusBefore || !later.empty())
            ++m.pcieSwitches;
    }

    void cpu(const XmlElement &e)
    {
        const int numa = static_cast<int>(intAttr(e, "numaid", -1, 1 << 20, -1));
        numas.insert(numa >= 0 ? numa : -1 - static_cast<int>(numas.size()));
        for (const XmlElement &c : e.children) {
            if (c.name == "pci")
                pci(c, numa, 1, -1);
            else if (c.name == "nic")
                for (const XmlElement &n : c.children)
                    if (n.name == "net")
                        addNet(n, numa, "", -1);
        }
    }
};

} // namespace

ImportedMachine NcclTopoFilter::read(const XmlElement &root, const std::string &file)
{
    ImportedMachine m;
    m.format = "nccl-topo-xml";
    m.file = file;
    if (root.name != "system")
        throw InputError(file,
                         lineRef(static_cast<std::size_t>(root.line)),
                         "the root element is <" + root.name
                                 + ">; expected <system> (NCCL topology)");
    Walker w{file, m, {}, {}, {}, {}, {}};
    for (const XmlElement &c : root.children)
        if (c.name == "cpu")
            w.cpu(c);
    if (m.gpus.empty())
        throw InputError(file,
                         lineRef(static_cast<std::size_t>(root.line)),
                         "no GPU: expected <pci class=\"0x03....\"> or <gpu> elements under <cpu>");
    m.numaNodes = static_cast<int>(w.numas.size());

    // NVLinks: to a peer GPU (direct mesh), to an NVSwitch (visible or not).
    std::set<std::pair<int, int>> pairs;
    std::set<std::string> switches;
    for (const auto &l : w.nvlinks) {
        ImportedGpu &g = m.gpus[static_cast<std::size_t>(l.gpu)];
        const auto peer = w.gpuByBus.find(l.target);
        if (peer != w.gpuByBus.end() && peer->second == l.gpu) {
            m.notes.push_back("line " + std::to_string(l.line) + ": " + g.label
                              + " has an NVLink to itself (ignored)");
            continue;
        }
        g.nvlinks += l.count;
        if (peer != w.gpuByBus.end()) {
            const auto key = std::minmax(l.gpu, peer->second);
            if (pairs.insert(key).second)
                m.links.push_back({key.first, key.second, "nvlink", l.count, l.line});
        } else {
            switches.insert(l.target);
            m.nvlinkSwitched = true;
            m.links.push_back({l.gpu, -1, "nvlink", l.count, l.line});
        }
    }
    // Direct links are listed from both ends: lanes per GPU were summed from its own rows.
    if (m.nvswitches == 0) {
        switches.erase("fffffff:ff:ff.0");
        m.nvswitches = static_cast<int>(switches.size());
    }
    if (w.nvlinks.empty())
        m.notes.push_back("no <nvlink> elements: a hand-written file or PCIe-only GPUs; NVLink "
                          "is not known from this file");
    for (ImportedNic &n : m.nics)
        if (n.nearestGpu >= 0)
            n.nearestPath = "PIX";
    return m;
}

ImportedMachine NcclGraphFilter::read(const XmlElement &root, const std::string &file)
{
    ImportedMachine m;
    m.format = "nccl-graph-xml";
    m.file = file;
    if (root.name != "graphs")
        throw InputError(file,
                         lineRef(static_cast<std::size_t>(root.line)),
                         "the root element is <" + root.name + ">; expected <graphs> (NCCL graph)");
    std::set<int> gpus, nets;
    const auto number = [&](const XmlElement &e, const char *key, double lo, double hi) {
        const std::string v = e.attributeOr(key, "0");
        double d = 0;
        if (!parseFiniteDouble(v, d) || d < lo || d > hi)
            throw InputError(file,
                             lineRef(static_cast<std::size_t>(e.line)),
                             "<" + e.name + " " + key + "=" + quote(v) + ">: expected a number from "
                                     + formatNumber(lo) + " to " + formatNumber(hi));
        return d;
    };
    for (const XmlElement &g : root.children) {
        if (g.name != "graph")
            continue;
        NcclGraph graph;
        graph.id = static_cast<int>(number(g, "id", 0, 1000));
        static const char *patterns[]
                = {"", "balanced-tree", "split-tree", "tree", "ring", "nvls", "collnet-direct"};
        const std::string p = g.attributeOr("pattern");
        double pn = 0;
        graph.pattern = parseFiniteDouble(p, pn) && pn >= 1 && pn <= 6 ? patterns[int(pn)] : p;
        graph.crossNic = static_cast<int>(number(g, "crossnic", 0, 2));
        graph.speedIntra = number(g, "speedintra", 0, 1e5);
        graph.speedInter = number(g, "speedinter", 0, 1e5);
        graph.typeIntra = g.attributeOr("typeintra");
        graph.typeInter = g.attributeOr("typeinter");
        for (const XmlElement &c : g.children) {
            if (c.name != "channel")
                continue;
            NcclChannel ch;
            for (const XmlElement &d : c.children) {
                const int dev = static_cast<int>(number(d, "dev", 0, 65535));
                if (d.name == "gpu") {
                    ch.gpus.push_back(dev);
                    gpus.insert(dev);
                } else if (d.name == "net") {
                    ch.nets.push_back(dev);
                    nets.insert(dev);
                }
            }
            if (graph.channels.size() >= 4096)
                throw InputError(file,
                                 lineRef(static_cast<std::size_t>(c.line)),
                                 "more than 4096 channels in one graph");
            graph.channels.push_back(std::move(ch));
        }
        m.graphs.push_back(std::move(graph));
    }
    if (m.graphs.empty())
        throw InputError(file,
                         lineRef(static_cast<std::size_t>(root.line)),
                         "no <graph> element in <graphs>");
    for (int d : gpus) {
        ImportedGpu g;
        g.label = "GPU" + std::to_string(d);
        m.gpus.push_back(g);
    }
    for (int d : nets) {
        ImportedNic n;
        n.label = n.name = "NET" + std::to_string(d);
        m.nics.push_back(n);
    }
    m.notes.push_back("an NCCL graph is a search result (rings and trees), not a topology: the "
                      "layout is the nearest shape for its GPUs, and the graphs are kept for an "
                      "overlay");
    return m;
}

} // namespace railyard::engine
