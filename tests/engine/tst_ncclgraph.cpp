// The NCCL graph overlay: a graph XML's channels placed on a layout's topology as link ids.
#include "base/inputerror.h"
#include "base/jsoncursor.h"
#include "import/importer.h"
#include "import/ncclgraphoverlay.h"
#include "layout/catalog.h"
#include "layout/layout.h"
#include "topology/topology.h"

#include <QTest>

#include <algorithm>
#include <set>

using namespace railyard::engine;

static std::string importPath(const std::string &name)
{
    return std::string(RAILYARD_TEST_DATA "/import/") + name;
}
static std::string graphPath(const std::string &name)
{
    return std::string(RAILYARD_TEST_DATA "/ncclgraph/") + name;
}

static Topology hgx(int nodes)
{
    ClusterConfig c; // HGX H100: 8 GPUs, 8 NICs, 4 NVSwitches, rail-optimized fabric
    c.nodes = nodes;
    return buildTopology(c, Catalog::builtin());
}

// Every edge's links walk from its `from` device to its `to` device, and each edge starts where
// the previous one ended (a ring closes on its first device).
static void checkContinuous(const Topology &t, const GraphChannelPath &p, bool ring)
{
    for (const GraphEdge &e : p.edges) {
        QVERIFY(!e.links.empty());
        int at = e.from;
        for (int l : e.links) {
            const Link &link = t.links()[static_cast<std::size_t>(l)];
            QVERIFY2(link.a == at || link.b == at,
                     qPrintable(QString::fromStdString(t.linkName(l) + " does not touch "
                                                       + t.deviceName(at))));
            at = t.otherEnd(l, at);
        }
        QCOMPARE(at, e.to);
    }
    if (ring)
        for (std::size_t i = 0; i < p.edges.size(); ++i)
            QCOMPARE(p.edges[(i + 1) % p.edges.size()].from, p.edges[i].to);
}

class TestNcclGraph : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // The real Azure NC A100 v4 graph on the layout its import makes: 4 GPUs, no NET, so every
    // channel stays in server 0 and rings close on their first GPU.
    void azureGraphOnItsImport()
    {
        const ImportedMachine m = importFile(importPath("nccl-graph-xml/azure-ncv4-graph.xml"));
        QCOMPARE(m.graphs.size(), std::size_t(3));
        const Layout l = layoutFromImport(m, Catalog::builtin());
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        const NcclGraphOverlay o = overlayNcclGraph(m.graphs[0], t, "azure-ncv4-graph.xml");
        QCOMPARE(o.channels.size(), std::size_t(2));
        QCOMPARE(o.pattern, std::string("ring"));
        QCOMPARE(o.patternCode, 4);
        QVERIFY(!o.tree);
        QVERIFY(!o.leaves);
        QCOMPARE(o.servers, 1);
        // Channel 1 visits 0, 3, 2, 1 and back to 0: four GPU-to-GPU edges.
        const GraphChannelPath &c1 = o.channels[1];
        QCOMPARE(c1.gpus, (std::vector<int>{0, 3, 2, 1}));
        QCOMPARE(c1.edges.size(), std::size_t(4));
        QCOMPARE(c1.edges[0].from, t.gpuDevice(0));
        QCOMPARE(c1.edges[0].to, t.gpuDevice(3));
        QCOMPARE(c1.edges[3].to, t.gpuDevice(0));
        checkContinuous(t, c1, true);
        QCOMPARE(QString::fromStdString(o.caption()),
                 QStringLiteral("NCCL graph from azure-ncv4-graph.xml: 2 ring channels (pattern "
                                "4), 4 GPUs per server, inside server 0"));
        // Graph 1 is pattern 1 (balanced tree): chains with arrows, no closing edge.
        const NcclGraphOverlay tree = overlayNcclGraph(m.graphs[1], t, "azure-ncv4-graph.xml");
        QVERIFY(tree.tree);
        QCOMPARE(tree.channels.size(), std::size_t(4));
        QCOMPARE(tree.channels[0].edges.size(), std::size_t(3));
        checkContinuous(t, tree.channels[0], false);
    }

    // A ring that leaves each server: on 2 HGX H100 servers, channel 0 enters server 0 by NIC 0,
    // runs GPU 0..7 over the NVSwitches, leaves by NIC 7 onto the rail to server 1's NIC 0.
    void ringAcrossServers()
    {
        const ImportedMachine m = importFile(graphPath("hgx-h100-ring-tree-handwritten.xml"));
        const Topology t = hgx(2);
        const NcclGraphOverlay o = overlayNcclGraph(m.graphs[0], t, "ring.xml");
        QCOMPARE(o.channels.size(), std::size_t(2));
        QVERIFY(o.leaves);
        QCOMPARE(o.servers, 2);
        const GraphChannelPath &c0 = o.channels[0];
        checkContinuous(t, c0, true);
        // Per server: NIC -> GPU 0, 7 GPU hops, GPU 7 -> NIC, NIC -> next server's NIC.
        QCOMPARE(c0.edges.size(), std::size_t(2 * 10));
        QCOMPARE(c0.gpus.size(), std::size_t(16));
        QCOMPARE(c0.gpus[8], 8);
        // GPU to GPU over NVLink only: GPU -> NVSwitch -> GPU.
        const GraphEdge &hop = c0.edges[1];
        QCOMPARE(hop.from, t.gpuDevice(0));
        QCOMPARE(hop.to, t.gpuDevice(1));
        QCOMPARE(hop.links.size(), std::size_t(2));
        for (int l : hop.links)
            QCOMPARE(t.links()[static_cast<std::size_t>(l)].kind, LinkKind::NvLink);
        // Channels spread over the NVSwitches: channel 1's first GPU hop uses another switch.
        const GraphEdge &hop1 = o.channels[1].edges[1];
        QVERIFY(t.otherEnd(hop1.links[0], hop1.from) != t.otherEnd(hop.links[0], hop.from));
        // The fabric edge: NIC 7 of server 0 up to its leaf and down to NIC 0 of server 1.
        const GraphEdge &out = c0.edges[9];
        const int nic7 = t.nicDevice(7), nic8 = t.nicDevice(8);
        QCOMPARE(out.from, nic7);
        QCOMPARE(out.to, nic8);
        QCOMPARE(out.links.front(), t.nicUplink(7));
        QCOMPARE(out.links.back(), t.nicUplink(8));
        // Rails 7 and 0 are different leaves: the route crosses a spine.
        QCOMPARE(out.links.size(), std::size_t(4));
        QCOMPARE(t.devices()[static_cast<std::size_t>(
                                     t.otherEnd(out.links[1], t.otherEnd(out.links[0], nic7)))]
                         .kind,
                 DeviceKind::Spine);
        // GPU 7 to NIC 7 goes over PCIe only.
        const GraphEdge &exit = c0.edges[8];
        QCOMPARE(exit.from, t.gpuDevice(7));
        for (int l : exit.links)
            QCOMPARE(t.links()[static_cast<std::size_t>(l)].kind, LinkKind::Pcie);
        QVERIFY(QString::fromStdString(o.caption()).contains("across 2 servers"));
    }

    // On an imported server (format 2) too, each channel takes its own NVSwitch.
    void explicitServerSpreadsChannels()
    {
        const ImportedMachine board = importFile(
                importPath("topo-m/hgx-h100-8gpu-8nic-sglang30401.txt"));
        Layout l = layoutFromImport(board, Catalog::builtin());
        QVERIFY(l.cluster.server.has_value());
        l.cluster.nodes = 2;
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        const ImportedMachine m = importFile(graphPath("hgx-h100-ring-tree-handwritten.xml"));
        const NcclGraphOverlay o = overlayNcclGraph(m.graphs[0], t, "ring.xml");
        std::set<int> switches;
        for (const GraphChannelPath &c : o.channels) {
            checkContinuous(t, c, true);
            const GraphEdge &hop = c.edges[1]; // the first GPU-to-GPU hop
            QCOMPARE(hop.links.size(), std::size_t(2));
            const int sw = t.otherEnd(hop.links[0], hop.from);
            QCOMPARE(t.devices()[static_cast<std::size_t>(sw)].kind, DeviceKind::NvSwitch);
            switches.insert(sw);
        }
        QCOMPARE(switches.size(), std::size_t(2));
    }

    // The tree graph on 4 servers: chains inside, NCCL's binary tree between servers (0 -> 2,
    // 2 -> 1, 2 -> 3), each parent->child edge from the parent's GPU 0 through NET 0.
    void treeAcrossServers()
    {
        const ImportedMachine m = importFile(graphPath("hgx-h100-ring-tree-handwritten.xml"));
        const Topology t = hgx(4);
        const NcclGraphOverlay o = overlayNcclGraph(m.graphs[1], t, "tree.xml");
        QVERIFY(o.tree);
        QCOMPARE(o.servers, 4);
        const GraphChannelPath &c = o.channels[0];
        checkContinuous(t, c, false);
        std::vector<std::pair<int, int>> serverEdges;
        for (const GraphEdge &e : c.edges) {
            const Device &a = t.devices()[static_cast<std::size_t>(e.from)];
            const Device &b = t.devices()[static_cast<std::size_t>(e.to)];
            if (a.kind == DeviceKind::Nic && b.kind == DeviceKind::Nic)
                serverEdges.emplace_back(a.node, b.node);
        }
        std::sort(serverEdges.begin(), serverEdges.end());
        QCOMPARE(serverEdges, (std::vector<std::pair<int, int>>{{0, 2}, {2, 1}, {2, 3}}));
        // 7 chain edges per server, 3 edges per server-to-server link.
        QCOMPARE(c.edges.size(), std::size_t(4 * 7 + 3 * 3));
    }

    // Graphs that do not fit the layout say which file, graph and channel, and why.
    void mismatch()
    {
        const ImportedMachine m = importFile(graphPath("hgx-h100-ring-tree-handwritten.xml"));
        ClusterConfig four;
        four.gpu = "A100-SXM-80GB";
        four.gpusPerNode = 4;
        four.nvlinkDomain = 4;
        four.nodes = 2;
        const Topology t = buildTopology(four, Catalog::builtin());
        try {
            overlayNcclGraph(m.graphs[0], t, "ring.xml");
            QFAIL("no error for 8 GPUs on 4-GPU servers");
        } catch (const InputError &e) {
            QCOMPARE(QString::fromUtf8(e.what()),
                     QStringLiteral("ring.xml: graph 0, channel 0: names GPU 4, but the layout's "
                                    "servers have 4 GPUs (GPU 0 to 3)"));
        }
        // One NIC per two GPUs: NET 7 does not exist.
        ClusterConfig shared;
        shared.nodes = 2;
        shared.nic.perGpu = 0.5;
        const Topology half = buildTopology(shared, Catalog::builtin());
        try {
            overlayNcclGraph(m.graphs[0], half, "ring.xml");
            QFAIL("no error for NET 7 on 4 NICs");
        } catch (const InputError &e) {
            QVERIFY2(QString::fromUtf8(e.what()).startsWith(
                             "ring.xml: graph 0, channel 0: leaves the server through NET 7, but "
                             "the layout's servers have 4 NICs"),
                     e.what());
        }
    }

    // The graphs an import keeps under "imported" read back as they were.
    void keptByTheImport()
    {
        const ImportedMachine m = importFile(graphPath("hgx-h100-ring-tree-handwritten.xml"));
        const Layout l = layoutFromImport(m, Catalog::builtin());
        const Layout reread = parseLayout(layoutToText(l), "x.railyard.json");
        const std::vector<NcclGraph> graphs = graphsFromImported(reread.original.get()["imported"]);
        QCOMPARE(graphs.size(), std::size_t(2));
        QCOMPARE(graphs[0].pattern, std::string("ring"));
        QCOMPARE(graphs[1].pattern, std::string("tree"));
        QCOMPARE(graphs[0].channels.size(), std::size_t(2));
        QCOMPARE(graphs[0].channels[1].gpus, m.graphs[0].channels[1].gpus);
        QCOMPARE(graphs[0].channels[1].nets, (std::vector<int>{1, 2}));
        QVERIFY(graphsFromImported(Json::object()).empty());
        QVERIFY(graphsFromImported(Json{{"graphs", {{{"channels", "x"}}}}}).empty());
    }
};

QTEST_APPLESS_MAIN(TestNcclGraph)
#include "tst_ncclgraph.moc"
