// Layout format 2: servers written out as devices and links (cluster.server), how they load,
// save, fail, build and price.
#include "base/inputerror.h"
#include "base/jsoncursor.h"
#include "collectives/collective.h"
#include "import/importer.h"
#include "layout/layout.h"
#include "step/evaluate.h"
#include "topology/topology.h"

#include "comparenear.h"
#include <QDirIterator>
#include <QTest>

using namespace railyard::engine;

namespace {

std::string dataPath(const std::string &name)
{
    return std::string(RAILYARD_TEST_DATA "/") + name;
}

// An HGX-style board: two CPUs, four PCIe switches with two GPUs each, `nics` NICs spread over
// the switches, four NVSwitches taking each GPU's 18 lanes 5/4/4/5 (GPU 0 gets `lanesGpu0`).
Json hgxServer(int nics, int lanesGpu0 = 18)
{
    Json devices = Json::array();
    for (int c = 0; c < 2; ++c)
        devices.push_back({{"id", "cpu" + std::to_string(c)}, {"kind", "cpu"}});
    for (int k = 0; k < 4; ++k)
        devices.push_back({{"id", "pex" + std::to_string(k)},
                           {"kind", "pcie-switch"},
                           {"host", "cpu" + std::to_string(k / 2)}});
    for (int g = 0; g < 8; ++g)
        devices.push_back({{"id", "gpu" + std::to_string(g)},
                           {"kind", "gpu"},
                           {"host", "pex" + std::to_string(g / 2)}});
    for (int n = 0; n < nics; ++n)
        devices.push_back({{"id", "nic" + std::to_string(n)},
                           {"kind", "nic"},
                           {"host", "pex" + std::to_string(n * 4 / nics)}});
    for (int s = 0; s < 4; ++s)
        devices.push_back({{"id", "nvs" + std::to_string(s)}, {"kind", "nvswitch"}});
    Json links = Json::array();
    for (int g = 0; g < 8; ++g) {
        int lanes[4] = {5, 4, 4, 5};
        if (g == 0)
            for (int missing = 18 - lanesGpu0, s = 3; missing > 0; --missing, s = (s + 3) % 4)
                --lanes[s];
        for (int s = 0; s < 4; ++s)
            if (lanes[s] > 0)
                links.push_back({{"a", "gpu" + std::to_string(g)},
                                 {"b", "nvs" + std::to_string(s)},
                                 {"count", lanes[s]}});
    }
    return {{"devices", devices}, {"links", links}};
}

// A 4-GPU board with NV4 between every pair (Perlmutter), less the pairs in `missing`.
Json meshServer(const std::vector<std::pair<int, int>> &missing = {})
{
    Json devices = Json::array({{{"id", "cpu0"}, {"kind", "cpu"}}});
    for (int g = 0; g < 4; ++g)
        devices.push_back({{"id", "gpu" + std::to_string(g)}, {"kind", "gpu"}, {"host", "cpu0"}});
    for (int n = 0; n < 4; ++n)
        devices.push_back({{"id", "nic" + std::to_string(n)}, {"kind", "nic"}, {"host", "cpu0"}});
    Json links = Json::array();
    for (int a = 0; a < 4; ++a)
        for (int b = a + 1; b < 4; ++b)
            if (std::find(missing.begin(), missing.end(), std::pair{a, b}) == missing.end())
                links.push_back({{"a", "gpu" + std::to_string(a)},
                                 {"b", "gpu" + std::to_string(b)},
                                 {"count", 4}});
    return {{"devices", devices}, {"links", links}};
}

std::string layoutText(const std::string &gpu, int nodes, const Json &server)
{
    Json doc = {{"format", "railyard-layout"},
                {"version", 2},
                {"cluster", {{"gpu", gpu}, {"nodes", nodes}, {"server", server}}},
                {"model", {{"preset", "llama3-8b"}}},
                {"parallel", {{"tp", 8}}}};
    return doc.dump(2);
}

Layout generatedHgx(int nodes)
{
    Layout l;
    l.cluster.gpu = "H100-SXM";
    l.cluster.nodes = nodes;
    ModelConfig m;
    m.preset = "llama3-8b";
    l.model = m;
    l.parallel.tp = 8;
    return l;
}

double allReduceTime(const Topology &t, std::vector<int> gpus, double bytes = 8.0 * (1 << 30))
{
    CollectiveRequest r;
    r.op = CollectiveOp::AllReduce;
    r.bytes = bytes;
    r.gpus = std::move(gpus);
    return estimateCollective(t, r).timeS;
}

std::vector<int> range(int n)
{
    std::vector<int> v(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i)
        v[static_cast<std::size_t>(i)] = i;
    return v;
}

} // namespace

class TestExplicitServer : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void readsAndRoundTrips()
    {
        const Layout a = parseLayout(layoutText("H100-SXM", 2, hgxServer(4)), "v2.json");
        QVERIFY(a.cluster.server);
        QCOMPARE(a.cluster.gpusPerNode, 8);
        QCOMPARE(a.cluster.nvlinkDomain, 8);
        QCOMPARE(a.cluster.nic.perGpu, 0.5);
        QCOMPARE(a.cluster.server->count(ServerDeviceKind::PcieSwitch), 4);
        QCOMPARE(a.cluster.server->links.size(), std::size_t(32));
        const std::string text = layoutToText(a);
        const Json written = Json::parse(text);
        QCOMPARE(written["version"].get<int>(), 2);
        QCOMPARE(written["cluster"]["server"]["devices"].size(), std::size_t(22));
        const Layout b = parseLayout(text, "again.json");
        QVERIFY(a.sameContent(b));
        QCOMPARE(layoutToText(b), text); // saving is stable
    }

    void versionOneStillReads()
    {
        // A format-1 file is format 2 without a server, and is written back as format 1.
        const Layout v1 = readLayoutFile(dataPath("seed-16-servers.railyard.json"));
        QVERIFY(!v1.cluster.server);
        QCOMPARE(layoutToJson(v1)["version"].get<int>(), 1);
        Json asTwo = layoutToJson(v1);
        asTwo["version"] = 2;
        const Layout v2 = parseLayout(asTwo.dump(), "as-two.json");
        QVERIFY(v1.sameContent(v2));
        // A format-1 file asking for an explicit server is told which version it needs.
        Json bad = Json::parse(layoutText("H100-SXM", 1, hgxServer(8)));
        bad["version"] = 1;
        try {
            parseLayout(bad.dump(), "old.json");
            QFAIL("no error");
        } catch (const InputError &e) {
            QVERIFY2(std::string(e.what()).find("old.json: /cluster/server: an explicit server "
                                                "needs \"version\": 2")
                             != std::string::npos,
                     e.what());
        }
    }

    void badServers_data()
    {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("expected");
        Json server = hgxServer(8);
        const auto row = [&](const char *name, const Json &s, const char *expected) {
            QTest::newRow(name) << QString::fromStdString(layoutText("H100-SXM", 2, s))
                                << QString::fromUtf8(expected);
        };
        Json s = server;
        s["links"][0]["b"] = "nvs9";
        row("unknown device in a link",
            s,
            "bad.json: /cluster/server/links/0/b: unknown device \"nvs9\"; expected the id of a "
            "GPU or NVSwitch in /cluster/server/devices");
        s = server;
        s["devices"][7]["id"] = "gpu0";
        row("duplicate id",
            s,
            "bad.json: /cluster/server/devices/7/id: the id \"gpu0\" is used twice (also "
            "/cluster/server/devices/6); expected unique ids");
        s = server;
        s["devices"][7].erase("host");
        row("GPU with no route out",
            s,
            "bad.json: /cluster/server/devices/7: GPU \"gpu1\" has no route out: expected "
            "\"host\"");
        s = server;
        s["devices"][2]["host"] = "pex1";
        s["devices"][3]["host"] = "pex0";
        row("hosts in a loop",
            s,
            "/cluster/server/devices/2/host: PCIe switch \"pex0\" has no "
            "route out: its hosts form a loop");
        s = server;
        s["devices"][6]["host"] = "nic0";
        row("host is a NIC",
            s,
            "/cluster/server/devices/6/host: \"nic0\" is a nic; expected a "
            "PCIe switch or CPU");
        s = server;
        s["links"][0]["b"] = "nic0";
        row("NVLink to a NIC",
            s,
            "/cluster/server/links/0/b: \"nic0\" is a nic; NVLink joins "
            "GPUs and NVSwitches");
        s = server;
        s["links"].push_back(s["links"][0]);
        row("link given twice",
            s,
            "/cluster/server/links/32: a second link between \"gpu0\" and "
            "\"nvs0\" (also /cluster/server/links/0)");
        s = server;
        s["links"][0]["kind"] = "pcie";
        row("pcie link",
            s,
            "/cluster/server/links/0/kind: expected \"nvlink\" (PCIe is given by "
            "each device's \"host\")");
        s = server;
        s["devices"] = Json::array({{{"id", "cpu0"}, {"kind", "cpu"}}});
        s["links"] = Json::array();
        row("no GPU", s, "/cluster/server/devices: expected at least one device of kind \"gpu\"");
        s = server;
        s["devices"][0]["kind"] = "tpu";
        row("unknown kind", s, "/cluster/server/devices/0/kind: expected one of");
        Json doc = Json::parse(layoutText("H100-SXM", 2, server));
        doc["cluster"]["gpus_per_node"] = 4;
        QTest::newRow("gpus_per_node disagrees")
                << QString::fromStdString(doc.dump())
                << "bad.json: /cluster/gpus_per_node: expected 8 (the GPUs in cluster.server), "
                   "got 4";
        doc = Json::parse(layoutText("H100-SXM", 2, server));
        doc["cluster"]["nic"] = {{"per_gpu", 0.5}};
        QTest::newRow("per_gpu disagrees") << QString::fromStdString(doc.dump())
                                           << "/cluster/nic/per_gpu: expected 1 (the server's 8 "
                                              "NICs for 8 GPUs), got 0.5";
        doc["version"] = 3;
        QTest::newRow("newer version") << QString::fromStdString(doc.dump())
                                       << "/version: version 3 is newer than this Railyard reads "
                                          "(up to 2)";
    }
    void badServers()
    {
        QFETCH(QString, json);
        QFETCH(QString, expected);
        try {
            parseLayout(json.toStdString(), "bad.json");
            QFAIL("no error");
        } catch (const InputError &e) {
            QVERIFY2(QString::fromStdString(e.what()).contains(expected), e.what());
        }
    }

    void buildsTheServerAsWritten()
    {
        const Layout l = parseLayout(layoutText("H100-SXM", 2, hgxServer(4)), "four-nics.json");
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        QVERIFY(t.shape().explicitServer);
        QCOMPARE(t.gpuCount(), 16);
        QCOMPARE(t.countOf(DeviceKind::Nic), 8);
        QCOMPARE(t.countOf(DeviceKind::PcieSwitch), 8);
        QCOMPARE(t.countOf(DeviceKind::NvSwitch), 8);
        QCOMPARE(t.countOf(DeviceKind::Cpu), 4);
        // GPUs 2k and 2k+1 share the NIC on their switch.
        QCOMPARE(t.gpuNics(2)[0], t.gpuNics(3)[0]);
        QVERIFY(t.gpuNics(1)[0] != t.gpuNics(2)[0]);
        QCOMPARE(t.deviceName(t.gpuNics(9)[0]), std::string("NIC 1.0"));
        // Every name can be searched for, as for generated clusters.
        for (int id = 0; id < t.deviceCount(); ++id)
            QCOMPARE(t.findDevice(t.deviceName(id)), id);
    }

    void importedHgxPricesAsGenerated()
    {
        // An imported DGX H100 (8 x NV18 into NVSwitches, 8 NICs each PIX to its GPU) on two
        // servers prices within 1% of the generated HGX H100 shape.
        ImportedMachine m = importFile(
                dataPath("import/topo-m/hgx-h100-8gpu-8nic-sglang30401.txt"));
        Layout imported = layoutFromImport(m, Catalog::builtin());
        QVERIFY(imported.cluster.server);
        imported.cluster.nodes = 2;
        Layout generated = generatedHgx(2);
        generated.cluster.nic = imported.cluster.nic;
        generated.cluster.nic.perGpu = 1;
        imported.model = generated.model;
        imported.parallel = generated.parallel;
        imported.training = generated.training;
        imported.mapping.clear();
        const Topology ti = buildTopology(imported.cluster, Catalog::builtin());
        const Topology tg = buildTopology(generated.cluster, Catalog::builtin());
        for (const std::vector<int> &gpus : {range(8), range(16)}) {
            for (const double bytes : {1e6, 8.0 * (1 << 30)}) {
                const double a = allReduceTime(ti, gpus, bytes);
                const double b = allReduceTime(tg, gpus, bytes);
                RAILYARD_COMPARE_NEAR(a, b, 0.01);
            }
        }
        const Evaluation ei = evaluate(imported, ti);
        const Evaluation eg = evaluate(generated, tg);
        QVERIFY2(ei.ok && eg.ok, (ei.error + eg.error).c_str());
        RAILYARD_COMPARE_NEAR(ei.stepTimeS, eg.stepTimeS, 0.01);
    }

    void fourNicsHalveInterNodeBandwidth()
    {
        const Topology eight = buildTopology(parseLayout(layoutText("H100-SXM", 2, hgxServer(8)),
                                                         "8.json")
                                                     .cluster,
                                             Catalog::builtin());
        const Topology four = buildTopology(parseLayout(layoutText("H100-SXM", 2, hgxServer(4)),
                                                        "4.json")
                                                    .cluster,
                                            Catalog::builtin());
        // What each GPU can push into the fabric halves: two GPUs share each NIC.
        for (int g = 0; g < 16; ++g)
            QCOMPARE(four.gpuNetRate(g), eight.gpuNetRate(g) / 2);
        // A ring all-reduce across both servers is bound by the NICs: it takes twice as long.
        // Inside one server nothing changes.
        const auto ring = [](const Topology &t) {
            CollectiveRequest r;
            r.bytes = 8.0 * (1 << 30);
            r.algorithm = Algorithm::Ring;
            return estimateCollective(t, r);
        };
        const double ratio = ring(four).timeS / ring(eight).timeS;
        qInfo("16-GPU ring all-reduce, 8 GiB: 4 NICs / 8 NICs = %.3f (bottleneck %s)",
              ratio,
              ring(four).bottleneck.c_str());
        RAILYARD_COMPARE_ABS(ratio, 2, 0.1);
        QCOMPARE(allReduceTime(four, range(8)), allReduceTime(eight, range(8)));
        // NCCL's pick (NVLS-tree) is NVLink-bound with 8 NICs, NIC-bound with 4.
        const double picked = allReduceTime(four, range(16)) / allReduceTime(eight, range(16));
        qInfo("16-GPU all-reduce (auto), 8 GiB: 4 NICs / 8 NICs = %.3f", picked);
        QVERIFY(picked > 1.2);
        // The generated shape with NICs shared two to one prices the same.
        Layout shared = generatedHgx(2);
        shared.cluster.nic.perGpu = 0.5;
        const Topology generated = buildTopology(shared.cluster, Catalog::builtin());
        for (const double bytes : {1e6, 8.0 * (1 << 30)}) {
            const double a = allReduceTime(four, range(16), bytes);
            const double b = allReduceTime(generated, range(16), bytes);
            RAILYARD_COMPARE_NEAR(a, b, 0.01);
        }
    }

    void missingNvlinkSlowsTheServer()
    {
        // NVSwitch board: GPU 0 has 14 of its 18 lanes.
        const Topology full = buildTopology(parseLayout(layoutText("H100-SXM", 1, hgxServer(8)),
                                                        "full.json")
                                                    .cluster,
                                            Catalog::builtin());
        const Topology less = buildTopology(parseLayout(layoutText("H100-SXM", 1, hgxServer(8, 14)),
                                                        "less.json")
                                                    .cluster,
                                            Catalog::builtin());
        const double switched = allReduceTime(less, range(8)) / allReduceTime(full, range(8));
        qInfo("8-GPU all-reduce, GPU 0 with 14 of 18 lanes: %.3fx the time", switched);
        QVERIFY2(switched > 1.15 && switched < 1.35, qPrintable(QString::number(switched)));
        // Direct mesh (4 x NV4): without the GPU 0 - GPU 1 bundle those two GPUs ring over two
        // bundles instead of three.
        const Topology mesh = buildTopology(parseLayout(layoutText("A100-SXM-80GB", 1, meshServer()),
                                                        "mesh.json")
                                                    .cluster,
                                            Catalog::builtin());
        const Topology broken = buildTopology(parseLayout(layoutText("A100-SXM-80GB",
                                                                     1,
                                                                     meshServer({{0, 1}})),
                                                          "broken.json")
                                                      .cluster,
                                              Catalog::builtin());
        QVERIFY(mesh.shape().directNvlink);
        const double meshRatio = allReduceTime(broken, range(4)) / allReduceTime(mesh, range(4));
        qInfo("4-GPU NV4 mesh all-reduce without one pair: %.3fx the time", meshRatio);
        QVERIFY2(meshRatio > 1.3 && meshRatio < 1.6, qPrintable(QString::number(meshRatio)));
        // The unlinked pair alone has no NVLink ring: it goes over PCIe, far slower than a
        // linked pair.
        const double pair = allReduceTime(broken, {0, 1}) / allReduceTime(broken, {0, 2});
        qInfo("unlinked pair / NV4 pair: %.2fx the time", pair);
        QVERIFY2(pair > 2, qPrintable(QString::number(pair)));
        QCOMPARE(pathLineRate(broken, 0, 2), 100.0);
        QVERIFY(pathLineRate(broken, 0, 1) < 100.0);
    }

    void directMeshBytesLandOnTheLinks()
    {
        // A ring over the mesh puts each GPU's sends on its links to the other members, each
        // byte once, and none on the PCIe tree.
        const Topology mesh = buildTopology(parseLayout(layoutText("A100-SXM-80GB", 1, meshServer()),
                                                        "mesh.json")
                                                    .cluster,
                                            Catalog::builtin());
        CollectiveRequest r;
        r.op = CollectiveOp::AllReduce;
        r.bytes = 1 << 30;
        r.gpus = {0, 1, 2, 3};
        r.wantLinks = true;
        const CollectiveResult res = estimateCollective(mesh, r);
        double nvBytes = 0;
        for (const LinkBytes &b : res.links) {
            QCOMPARE(mesh.links()[static_cast<std::size_t>(b.link)].kind, LinkKind::NvLink);
            nvBytes += b.up + b.down;
        }
        QCOMPARE(res.links.size(), std::size_t(6));
        // Ring all-reduce: each rank sends 2(n-1)/n x S.
        RAILYARD_COMPARE_NEAR(nvBytes, (4 * 1.5 * r.bytes), 1e-3);
    }

    void everyImportFixtureLoadsAndPrices_data()
    {
        QTest::addColumn<QString>("file");
        QDirIterator it(QStringLiteral(RAILYARD_TEST_DATA "/import"),
                        {QStringLiteral("*.txt"), QStringLiteral("*.xml")},
                        QDir::Files,
                        QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString f = it.next();
            if (f.contains(QStringLiteral("/import/hostile/")))
                continue; // refused or noted on purpose: tst_importhostile
            QTest::newRow(qPrintable(QFileInfo(f).fileName())) << f;
        }
    }
    void everyImportFixtureLoadsAndPrices()
    {
        QFETCH(QString, file);
        const ImportedMachine m = importFile(file.toStdString());
        const Layout l = layoutFromImport(m, Catalog::builtin());
        const bool board = m.format == "nvidia-smi-topo" || m.format == "nccl-topo-xml";
        QCOMPARE(bool(l.cluster.server), board);
        const std::string text = layoutToText(l);
        QCOMPARE(Json::parse(text)["version"].get<int>(), board ? 2 : 1);
        const Layout back = parseLayout(text, "imported.railyard.json");
        QVERIFY(back.sameContent(l));
        const Topology t = buildTopology(back.cluster, Catalog::builtin());
        QCOMPARE(t.gpuCount(), int(m.gpus.size()));
        const Evaluation e = evaluate(back, t);
        QVERIFY2(e.ok, e.error.c_str());
        QVERIFY(e.stepTimeS > 0 && std::isfinite(e.stepTimeS));
        if (t.gpuCount() >= 2) {
            const double s = allReduceTime(t, range(t.gpuCount()), 1 << 28);
            QVERIFY(s > 0 && std::isfinite(s));
        }
    }

    void hybridCubeMeshRingsOverNvlink()
    {
        // DGX-1 V100: NV1/NV2 to four peers each; GPUs 0 and 5 have no NVLink between them.
        const Layout l = layoutFromImport(
                importFile(dataPath(
                        "import/topo-m/v100-8gpu-hybridcube-legacy-mlx5col-paddlefleetx.txt")),
                Catalog::builtin());
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        QVERIFY(t.shape().directNvlink);
        QCOMPARE(t.countOf(DeviceKind::NvSwitch), 0);
        QVERIFY(t.nvlinkBetween(0, 5) < 0);
        QVERIFY(t.nvlinkRing(0xFF)); // the whole board rings over NVLink
        QVERIFY(!t.nvlinkRing((1u << 0) | (1u << 5)));
        // GPUs 0 and 5 go over PCIe (both under CPU 0): slower than the NV2 pair 0-1, and
        // no byte on NVLink.
        const double unlinked = allReduceTime(t, {0, 5}), nv2 = allReduceTime(t, {0, 1});
        qInfo("all-reduce 8 GiB: GPUs 0,5 (no NVLink) %.4f s, GPUs 0,1 (NV2) %.4f s", unlinked, nv2);
        QVERIFY(unlinked > 1.3 * nv2);
        CollectiveRequest r;
        r.bytes = 1 << 30;
        r.gpus = {0, 5};
        r.wantLinks = true;
        const CollectiveResult res = estimateCollective(t, r);
        QVERIFY(!res.links.empty());
        for (const LinkBytes &b : res.links)
            QCOMPARE(t.links()[static_cast<std::size_t>(b.link)].kind, LinkKind::Pcie);
    }
};

QTEST_APPLESS_MAIN(TestExplicitServer)
#include "tst_explicitserver.moc"
