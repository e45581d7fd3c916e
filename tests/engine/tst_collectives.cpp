#include "base/jsoncursor.h"
#include "base/units.h"
#include "collectives/collective.h"
#include "collectives/traffic.h"
#include "layout/layout.h"
#include "topology/topology.h"

#include <QTest>

#include "comparenear.h"
#include <algorithm>
#include <cmath>
#include <numeric>

using namespace railyard::engine;

namespace {

Topology load(const QString &name)
{
    const Layout l = readLayoutFile(std::string(RAILYARD_TEST_DATA "/collectives/")
                                    + name.toStdString() + ".railyard.json");
    return buildTopology(l.cluster, Catalog::builtin());
}

CollectiveResult run(const Topology &t,
                     CollectiveOp op,
                     const QString &size,
                     const QString &gpus,
                     Algorithm algo)
{
    CollectiveRequest req;
    req.op = op;
    req.bytes = static_cast<double>(parseSize(size.toStdString()));
    if (!gpus.isEmpty())
        req.gpus = parseIndexList(gpus.toStdString(), t.gpuCount());
    req.algorithm = algo;
    return estimateCollective(t, req);
}

// One flow of `bytes` from GPU a to GPU b, split over a's NICs (the k-th flow starts at its k-th
// NIC), through the host paths, the NICs' uplinks and the fabric.
void referenceFlow(
        LinkTraffic &tr, const Topology &t, int a, int b, double bytes, int k, double flows)
{
    const int first = t.nicDevice(0);
    const auto nicsA = t.gpuNics(a);
    const auto nicsB = t.gpuNics(b);
    const std::size_t count = nicsA.size();
    for (std::size_t j = 0; j < count; ++j) {
        const int na = nicsA[(j + static_cast<std::size_t>(k)) % count] - first;
        const int nb = nicsB[(j + static_cast<std::size_t>(k)) % nicsB.size()] - first;
        tr.addHostToNic(a, na, bytes / double(count), 0);
        tr.addNetwork(na, nb, bytes / double(count), flows);
        tr.addHostToNic(b, nb, 0, bytes / double(count));
    }
}

// NCCL's all-to-all priced flow by flow, as the engine did before it priced domain classes:
// every GPU sends S x |e| / n bytes to its peer in every other domain e (GPU k -> GPU k mod |e|),
// each flow split over the sender's NICs. The engine must put the same bytes on every link.
void referenceAllToAll(
        LinkTraffic &tr, const Topology &t, const GroupShape &g, double S, double scale)
{
    const int n = g.n;
    const int N = g.domains;
    for (int d = 0; d < N; ++d) {
        const int m = g.members(d);
        for (int k = 0; k < m; ++k) {
            const int a = g.member(d, k);
            tr.addNvlink(a, S * (m - 1) / n, S * (m - 1) / n);
            for (int e = 0; e < N; ++e) {
                if (e == d)
                    continue;
                const int me = g.members(e);
                const int b = g.member(e, k % me);
                referenceFlow(tr, t, a, b, S * me / n * scale, k, g.channelsPerNic);
            }
        }
    }
}

// The columns trafficCluster() and trafficGroup() read.
void addTrafficClusterColumns()
{
    QTest::addColumn<int>("fabric");
    QTest::addColumn<QString>("gpu");
    QTest::addColumn<int>("nodes");
    QTest::addColumn<int>("gpusPerNode");
    QTest::addColumn<int>("domain");
    QTest::addColumn<double>("nicsPerGpu");
    QTest::addColumn<QString>("gpus");
}

// A cluster from the current test row's columns (fabric, gpu, nodes, gpusPerNode, domain,
// nicsPerGpu) with small leaves (several leaf groups, pods, to cross) and ECMP (the flow counts
// per uplink matter).
Topology trafficCluster()
{
    QFETCH(int, fabric);
    QFETCH(QString, gpu);
    QFETCH(int, nodes);
    QFETCH(int, gpusPerNode);
    QFETCH(int, domain);
    QFETCH(double, nicsPerGpu);
    ClusterConfig c;
    c.gpu = gpu.toStdString();
    c.nodes = nodes;
    c.gpusPerNode = gpusPerNode;
    c.nvlinkDomain = domain;
    c.nic.perGpu = nicsPerGpu;
    c.fabric.kind = FabricKind(fabric);
    c.fabric.oversubscription = 0.1;
    c.tuning.adaptiveRouting = false;
    return buildTopology(c, Catalog::builtin());
}

// The current test row's `gpus` (every GPU when empty), spanning several domains.
GroupShape trafficGroup(const Topology &t)
{
    QFETCH(QString, gpus);
    std::vector<int> members;
    if (gpus.isEmpty()) {
        members.resize(static_cast<std::size_t>(t.gpuCount()));
        std::iota(members.begin(), members.end(), 0);
    } else {
        members = parseIndexList(gpus.toStdString(), t.gpuCount());
    }
    const GroupShape g = analyzeGroup(t, members);
    if (g.domains < 2)
        qFatal("the test group should span domains");
    return g;
}

// NCCL's PAT flow by flow: in step k every rank sends min(2^k, what is left of N - 1) blocks
// of S / N to the rank 2^k away.
void referencePat(LinkTraffic &tr, const Topology &t, const GroupShape &g, double S)
{
    const int N = g.domains;
    for (int d = 0; d < N; ++d) {
        int remaining = N - 1, k = 0;
        for (int dist = 1; remaining > 0; dist *= 2, ++k) {
            const int blocks = std::min(dist, remaining);
            const int e = (d + dist) % N;
            for (int m = 0; m < g.members(d); ++m)
                referenceFlow(tr,
                              t,
                              g.member(d, m),
                              g.member(e, m % g.members(e)),
                              S * blocks / N,
                              k,
                              g.channelsPerNic);
            remaining -= blocks;
        }
    }
}

// `actual` puts the same bytes on every link of `t` as `expected`, touches the same links,
// takes the same phase time with the same kind of bottleneck, and gives every leaf's uplinks
// the same ECMP efficiency; at least one link is loaded and, off a single switch, the spine.
void compareTraffic(const Topology &t, LinkTraffic &expected, LinkTraffic &actual)
{
    const double expectedTime = expected.phaseTime();
    const double actualTime = actual.phaseTime();
    int loaded = 0, spine = 0;
    for (int l = 0; l < t.linkCount(); ++l) {
        const double eu = expected.phaseUp(l), ed = expected.phaseDown(l);
        QVERIFY2(railyard::test::nearRel(actual.phaseUp(l), eu, 1e-9)
                         && railyard::test::nearRel(actual.phaseDown(l), ed, 1e-9),
                 qPrintable(QStringLiteral("%1: %2 up, %3 down; per GPU %4, %5")
                                    .arg(QString::fromStdString(t.linkName(l)))
                                    .arg(actual.phaseUp(l))
                                    .arg(actual.phaseDown(l))
                                    .arg(eu)
                                    .arg(ed)));
        if (eu > 0 || ed > 0) {
            ++loaded;
            const Link &k = t.links()[static_cast<std::size_t>(l)];
            spine += t.devices()[static_cast<std::size_t>(k.b)].kind == DeviceKind::Spine;
        }
    }
    QVERIFY(loaded > 0);
    if (t.countOf(DeviceKind::Spine) > 0)
        QVERIFY2(spine > 0, "the case should cross the spine");
    std::vector<int> touchedExpected = expected.phaseLinks(), touchedActual = actual.phaseLinks();
    std::sort(touchedExpected.begin(), touchedExpected.end());
    std::sort(touchedActual.begin(), touchedActual.end());
    QCOMPARE(touchedActual, touchedExpected);
    QVERIFY2(railyard::test::nearRel(actualTime, expectedTime, 1e-9),
             qPrintable(QStringLiteral("%1 s, per GPU %2 s").arg(actualTime).arg(expectedTime)));
    // The bottleneck: among equally loaded links of one kind (GPU 0's or GPU 16's PCIe, say)
    // either may be named, but it carries the bottleneck's bytes on the same kind of link.
    const int ba = actual.phaseBottleneck(), be = expected.phaseBottleneck();
    QVERIFY(ba >= 0 && be >= 0);
    const auto ends = [&](int l) {
        const Link &k = t.links()[static_cast<std::size_t>(l)];
        return std::pair(t.devices()[static_cast<std::size_t>(k.a)].kind,
                         t.devices()[static_cast<std::size_t>(k.b)].kind);
    };
    QVERIFY2(ends(ba) == ends(be),
             qPrintable(QString::fromStdString(t.linkName(ba) + " vs " + t.linkName(be))));
    QVERIFY(railyard::test::nearRel(std::max(expected.phaseUp(ba), expected.phaseDown(ba)),
                                    std::max(expected.phaseUp(be), expected.phaseDown(be)),
                                    1e-9));
    for (int leaf = 0; leaf < t.countOf(DeviceKind::Leaf); ++leaf)
        QVERIFY(railyard::test::nearRel(actual.uplinkEfficiency(leaf),
                                        expected.uplinkEfficiency(leaf),
                                        1e-9));
}

} // namespace

// The measured nccl-tests points of the reference collectives.md, section 3: each row prices the
// same collective on a layout of the same hardware and compares bus bandwidth. The error is
// printed for every row.
class TestCollectives : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void measuredBusBandwidth_data()
    {
        QTest::addColumn<QString>("layout");
        QTest::addColumn<int>("op");
        QTest::addColumn<QString>("size");
        QTest::addColumn<QString>("gpus");
        QTest::addColumn<int>("algo");
        QTest::addColumn<double>("measured");
        QTest::addColumn<double>("tolerance");
        const int AR = int(CollectiveOp::AllReduce), AG = int(CollectiveOp::AllGather);
        const int autoA = int(Algorithm::Auto), ring = int(Algorithm::Ring),
                  nvls = int(Algorithm::Nvls);
        const double t = 0.10;
        // Single node, NVLink/NVSwitch.
        QTest::newRow("S1 8xH100 AR NVLS 8GiB") << "h100-1node" << AR << "8GiB"
                                                << "" << autoA << 478.87 << t;
        QTest::newRow("S2 8xH200 AR NVLS 8GiB") << "h200-1node" << AR << "8GiB"
                                                << "" << autoA << 479.98 << t;
        // S5: NCCL_ALGO=RING gives 365-370 for every n from 2 to 8 (midpoint 367.5).
        QTest::newRow("S5 n=2 ring") << "h100-1node" << AR << "4GiB"
                                     << "0-1" << ring << 367.5 << t;
        QTest::newRow("S5 n=4 ring") << "h100-1node" << AR << "4GiB"
                                     << "0-3" << ring << 367.5 << t;
        QTest::newRow("S5 n=8 ring") << "h100-1node" << AR << "4GiB"
                                     << "0-7" << ring << 367.5 << t;
        QTest::newRow("S6 n=5 NVLS") << "h100-1node" << AR << "4GiB"
                                     << "0-4" << nvls << 420.0 << t;
        QTest::newRow("S6 n=6 NVLS") << "h100-1node" << AR << "4GiB"
                                     << "0-5" << nvls << 440.0 << t;
        QTest::newRow("S6 n=7 NVLS") << "h100-1node" << AR << "4GiB"
                                     << "0-6" << nvls << 460.0 << t;
        QTest::newRow("S6 n=8 NVLS") << "h100-1node" << AR << "4GiB"
                                     << "0-7" << nvls << 480.0 << t;
        // S6 n <= 4: 365-370 measured; NVLS brings nothing there, so NCCL's choice (auto) runs.
        QTest::newRow("S6 n=2 auto") << "h100-1node" << AR << "4GiB"
                                     << "0-1" << autoA << 367.5 << t;
        QTest::newRow("S6 n=3 auto") << "h100-1node" << AR << "4GiB"
                                     << "0-2" << autoA << 367.5 << t;
        QTest::newRow("S6 n=4 auto") << "h100-1node" << AR << "4GiB"
                                     << "0-3" << autoA << 367.5 << t;
        QTest::newRow("S7 AG ring 1GiB") << "h100-1node" << AG << "1GiB"
                                         << "" << ring << 360.0 << t;
        QTest::newRow("S7 AR ring 1GiB") << "h100-1node" << AR << "1GiB"
                                         << "" << ring << 360.0 << t;
        QTest::newRow("S9 8xA100 AR 8GiB") << "a100-1node" << AR << "8GiB"
                                           << "" << autoA << 231.58 << t;
        QTest::newRow("S10 8xA100 AR 1GiB") << "a100-1node" << AR << "1GiB"
                                            << "" << autoA << 230.8 << t;
        // Multi-node.
        QTest::newRow("M1 8 nodes IB SHARP") << "h100-ib-sharp-8node" << AR << "8GiB"
                                             << "" << autoA << 386.56 << t;
        QTest::newRow("M4 2 nodes RoCE NVLS off") << "h100-roce-2node-nonvls" << AR << "8GiB"
                                                  << "" << autoA << 330.0 << t;
        // M4 with NVLS: the same system measured 430 on one node too, 10% below every other
        // H100 NVLS point (S1 479, S6 480).
        QTest::newRow("M4 2 nodes RoCE NVLS on") << "h100-roce-2node" << AR << "8GiB"
                                                 << "" << autoA << 430.0 << t;
        QTest::newRow("M5 4 nodes RoCE") << "h100-roce-4node" << AR << "8GiB"
                                         << "" << autoA << 320.0 << t;
        QTest::newRow("M8 DGX A100 8xHDR ring") << "a100-hdr-4node" << AR << "8GiB"
                                                << "" << ring << 192.0 << t;
        // M9: 3 nodes, 128 MiB: "~96 peak, 84.9 avg"; compared with the average of the runs.
        QTest::newRow("M9 A100 4xHDR 3 nodes 128MiB") << "a100-4nic-3node" << AR << "128MiB"
                                                      << "" << autoA << 84.9 << t;
        QTest::newRow("M10 4x200G multi-node ring") << "a100-4nic-4node" << AR << "4GiB"
                                                    << "" << ring << 96.0 << t;

        // Section 3c (released after the first measurement).
        const int A2A = int(CollectiveOp::AllToAll);
        QTest::newRow("X1 GB200 1 tray AR ring") << "gb200-1tray" << AR << "8GiB"
                                                 << "" << ring << 679.6 << t;
        QTest::newRow("X2 H100 2 nodes all-to-all") << "h100-ib-2node" << A2A << "4GiB"
                                                    << "" << autoA << 94.0 << t;
        QTest::newRow("X2 H100 8 nodes all-to-all") << "h100-ib-8node" << A2A << "4GiB"
                                                    << "" << autoA << 54.0 << t;
        QTest::newRow("S3 8xH200 AR default") << "h200-1node" << AR << "4GiB"
                                              << "" << autoA << 475.0 << t;
        QTest::newRow("S4 8xH100 AR default") << "h100-1node" << AR << "8GiB"
                                              << "" << autoA << 476.0 << t;
        QTest::newRow("M2 H100 2 nodes IB AR default") << "h100-ib-2node" << AR << "8GiB"
                                                       << "" << autoA << 440.6 << t;
        // M6: "~350 typical, dips below 300" on 1,984 H200: the spread is the tolerance.
        QTest::newRow("M6 H200 248 nodes 512MiB") << "h200-248node" << AR << "512MiB"
                                                  << "" << autoA << 350.0 << 0.15;
        QTest::newRow("M14 H100 8 nodes AR") << "h100-ib-8node" << AR << "8GiB"
                                             << "" << autoA << 375.0 << t;
        QTest::newRow("R1 NVL72 1 rack 8GiB") << "gb200-nvl72-1rack" << AR << "8GiB"
                                              << "" << autoA << 835.0 << t;
        QTest::newRow("R2 NVL72 2 racks 16GiB") << "gb200-nvl72-2racks" << AR << "16GiB"
                                                << "" << autoA << 815.0 << t;
        QTest::newRow("R3 NVL72 20 racks 16GiB") << "gb200-nvl72-20racks" << AR << "16GiB"
                                                 << "" << autoA << 405.7 << t;
        QTest::newRow("R4 GB200 2 trays MNNVL") << "gb200-nvl72-1rack" << AR << "8GiB"
                                                << "0-7" << autoA << 811.0 << t;
    }
    void measuredBusBandwidth()
    {
        QFETCH(QString, layout);
        QFETCH(int, op);
        QFETCH(QString, size);
        QFETCH(QString, gpus);
        QFETCH(int, algo);
        QFETCH(double, measured);
        QFETCH(double, tolerance);
        const Topology t = load(layout);
        const CollectiveResult r = run(t, CollectiveOp(op), size, gpus, Algorithm(algo));
        const double err = (r.busbwGBps - measured) / measured;
        qInfo("%-32s model %7.1f GB/s (%s/%s)  measured %7.1f  error %+5.1f%%",
              QTest::currentDataTag(),
              r.busbwGBps,
              toString(r.algorithm),
              toString(r.protocol),
              measured,
              100 * err);
        QVERIFY2(std::abs(err) <= tolerance, qPrintable(QString::number(100 * err) + "%"));
    }

    // The seed's teaching point: the textbook flat ring across 16 servers is about ten times
    // slower than one server, while NCCL's real algorithms are much faster across servers.
    void flatRingBesideRealistic()
    {
        const Layout l = readLayoutFile(RAILYARD_TEST_DATA "/seed-16-servers.railyard.json");
        Layout plain = l;
        plain.cluster.tuning.efficiency.reset(); // the catalog's measured fractions
        const Topology t = buildTopology(plain.cluster, Catalog::builtin());
        CollectiveRequest req;
        req.bytes = 14e9;
        req.algorithm = Algorithm::FlatRing;
        req.efficiency = 0.8;
        const double flat = estimateCollective(t, req).timeS;
        req.algorithm = Algorithm::Auto;
        const CollectiveResult real = estimateCollective(t, req);
        qInfo("14 GB on 128 GPUs: flat ring %.3f s, realistic %.3f s (%s), %.1fx faster",
              flat,
              real.timeS,
              toString(real.algorithm),
              flat / real.timeS);
        RAILYARD_COMPARE_ABS(flat, 0.694, 0.001);
        QVERIFY(real.timeS < flat / 5);
        // Bound by the 8 NICs per server: busbw near 8 x 48 GB/s or NVLink's 371.
        QVERIFY(real.busbwGBps > 300 && real.busbwGBps < 400);
    }

    void allToAllCannotAggregateNics()
    {
        // Rule 7: inter-node all-to-all busbw ~ N/(N-1) x the per-GPU NIC rate.
        const Topology t = load("h100-roce-4node");
        const CollectiveResult r = run(t, CollectiveOp::AllToAll, "4GiB", "", Algorithm::Auto);
        const double perGpuNic = 50 * Catalog::builtin().nic("RoCE-400G")->efficiency;
        const double expected = 4.0 / 3.0 * perGpuNic;
        qInfo("all-to-all on 4 nodes: %.1f GB/s busbw, rule of thumb %.1f", r.busbwGBps, expected);
        RAILYARD_COMPARE_NEAR(r.busbwGBps, expected, 0.10);
    }

    // All-to-all is priced per class of NVLink domains, not per GPU and domain; the bytes on
    // every link, the phase time (ECMP flow counts included) and the bottleneck stay those of
    // the flow-by-flow formulation. Sizes are multiples of 2^20 x GPUs, so every float sum is
    // exact in both and they must agree to 1e-9.
    void allToAllPerDomainClassMatchesPerGpu_data()
    {
        addTrafficClusterColumns();
        QTest::addColumn<double>("scale");
        const int rail = int(FabricKind::RailOptimized), tier3 = int(FabricKind::ThreeTier),
                  single = int(FabricKind::SingleSwitch);
        QTest::newRow("rail, 4 leaf groups")
                << rail << "H100-SXM" << 16 << 8 << 8 << 1.0 << "" << 1.0;
        QTest::newRow("rail, uneven domains") << rail << "H100-SXM" << 16 << 8 << 8 << 1.0
                                              << "0-5,8-15,16-18,40-47,120-127" << 1.0;
        QTest::newRow("rail, DeepEP scale")
                << rail << "H100-SXM" << 16 << 8 << 8 << 1.0 << "" << 0.5;
        QTest::newRow("rail, 2 NICs per GPU")
                << rail << "H100-SXM" << 8 << 8 << 8 << 2.0 << "0-7,16-21,33,60-63" << 1.0;
        QTest::newRow("rail, NIC per 2 GPUs")
                << rail << "H100-SXM" << 12 << 8 << 8 << 0.5 << "0-3,8-15,24-26,90-95" << 1.0;
        QTest::newRow("three-tier, 2 pods")
                << tier3 << "H100-SXM" << 24 << 8 << 8 << 1.0 << "" << 1.0;
        QTest::newRow("three-tier, uneven")
                << tier3 << "H100-SXM" << 24 << 8 << 8 << 1.0 << "0-7,40-43,100-106,180-191" << 1.0;
        QTest::newRow("single switch") << single << "H100-SXM" << 4 << 8 << 8 << 1.0 << "" << 1.0;
        QTest::newRow("NVL72, 2 racks uneven")
                << rail << "GB200" << 36 << 4 << 72 << 1.0 << "0-71,72-99" << 1.0;
    }
    void allToAllPerDomainClassMatchesPerGpu()
    {
        QFETCH(double, scale);
        const Topology t = trafficCluster();
        const GroupShape g = trafficGroup(t);
        const double S = double(g.n) * (1 << 20);
        LinkTraffic expected(t), actual(t);
        expected.beginPhase(1.0);
        referenceAllToAll(expected, t, g, S, scale);
        actual.beginPhase(1.0);
        addCollectiveTraffic(actual, t, g, CollectiveOp::AllToAll, Algorithm::Direct, S, scale);
        compareTraffic(t, expected, actual);
    }

    // PAT's host paths and NIC uplinks are summed per member and NIC and added once; the
    // bytes on every link, the phase time, the ECMP flow counts and the bottleneck stay those
    // of adding every step as a flow. Sizes are multiples of 2^20 x domains: every float sum is
    // exact in both.
    void patSumsEachMembersStepsOnce_data()
    {
        addTrafficClusterColumns();
        const int rail = int(FabricKind::RailOptimized), tier3 = int(FabricKind::ThreeTier);
        QTest::newRow("rail, one rail, 16 domains")
                << rail << "H100-SXM" << 16 << 8 << 8 << 1.0
                << "0,8,16,24,32,40,48,56,64,72,80,88,96,104,112,120";
        QTest::newRow("rail, across rails, 11 domains")
                << rail << "H100-SXM" << 16 << 8 << 8 << 1.0 << "0,9,18,27,36,45,54,63,64,73,82";
        QTest::newRow("rail, 2 NICs per GPU")
                << rail << "H100-SXM" << 8 << 8 << 8 << 2.0 << "1,9,17,25,33,41,50";
        QTest::newRow("rail, NIC per 2 GPUs")
                << rail << "H100-SXM" << 12 << 8 << 8 << 0.5 << "0,8,16,24,32,40,48,56,64,72,80";
        QTest::newRow("three-tier, 2 pods")
                << tier3 << "H100-SXM" << 24 << 8 << 8 << 1.0
                << "0,8,16,24,32,40,48,56,64,72,80,88,96,104,112,120,128,136,144,152,160,168,176,"
                   "184";
        QTest::newRow("NVL72 trays, 1 GPU each")
                << rail << "GB200" << 18 << 4 << 4 << 1.0 << "0,4,8,12,16,20,24,28,32";
    }
    void patSumsEachMembersStepsOnce()
    {
        const Topology t = trafficCluster();
        const GroupShape g = trafficGroup(t);
        QCOMPARE(g.ppn, 1);
        const double S = double(g.domains) * (1 << 20);
        LinkTraffic expected(t), actual(t);
        expected.beginPhase(1.0);
        referencePat(expected, t, g, S);
        actual.beginPhase(1.0);
        addCollectiveTraffic(actual, t, g, CollectiveOp::AllGather, Algorithm::Pat, S, 1.0);
        compareTraffic(t, expected, actual);
    }

    void twoNodeTreeBeatsTheNicLimit()
    {
        // Rule 6: on exactly two nodes a tree moves fewer bytes between nodes than a ring
        // (S per node each way, not 2(n-1)/n x S), so NVLS-tree's bus bandwidth can exceed the
        // NICs' sum (8 x 40.5 GB/s on 400G RoCE), while the ring cannot.
        const Topology t = load("h100-roce-2node");
        const CollectiveResult best = run(t, CollectiveOp::AllReduce, "8GiB", "", Algorithm::Auto);
        const CollectiveResult ring = run(t, CollectiveOp::AllReduce, "8GiB", "", Algorithm::Ring);
        const double nics = 8 * 50 * Catalog::builtin().nic("RoCE-400G")->efficiency;
        qInfo("H100 2 nodes: %s %.1f, ring %.1f GB/s, NICs %.0f",
              toString(best.algorithm),
              best.busbwGBps,
              ring.busbwGBps,
              nics);
        QVERIFY(ring.busbwGBps <= nics * 1.001);
        QVERIFY(best.busbwGBps > nics * 1.2);
        QCOMPARE(best.algorithm, Algorithm::NvlsTree);
    }

    // X3: a 1 KB all-reduce on one H100 server without CUDA graphs takes about 26 us: NCCL's
    // latency model plus the launch.
    void smallMessageLatency()
    {
        const Topology t = load(QStringLiteral("h100-1node"));
        const CollectiveResult r = run(t, CollectiveOp::AllReduce, "1KB", "", Algorithm::Auto);
        qInfo("1 KB all-reduce on 8 H100: %.1f us (measured about 26)", r.timeS * 1e6);
        RAILYARD_COMPARE_NEAR(r.timeS * 1e6, 26.0, 0.15);
    }

    // Section 3c, R1-R3: bus bandwidth across message sizes, printed; the largest size is
    // checked to 10% above. Below it the measured curves climb more slowly than NCCL's latency
    // model says (R3 reaches half its plateau only at 1 GiB): a known gap, reported. Checked
    // here: the model's curve rises with size, and the network phase between racks bounds the
    // 20-rack all-reduce far below one rack's.
    void nvl72Racks()
    {
        struct Curve
        {
            const char *layout;
            double measured[6]; // 0.5, 1, 2, 4, 8, 16 GiB (0: not measured)
        };
        const Curve curves[] = {{"gb200-nvl72-1rack", {586, 681, 758, 839, 835, 0}},
                                {"gb200-nvl72-2racks", {494, 596, 680, 743, 793, 815}},
                                {"gb200-nvl72-20racks", {151, 219, 287, 346, 381, 405.7}}};
        const char *sizes[] = {"512MiB", "1GiB", "2GiB", "4GiB", "8GiB", "16GiB"};
        for (const Curve &c : curves) {
            const Topology t = load(QString::fromLatin1(c.layout));
            double previous = 0;
            for (int i = 0; i < 6; ++i) {
                if (c.measured[i] <= 0)
                    continue;
                const CollectiveResult r = run(t,
                                               CollectiveOp::AllReduce,
                                               QString::fromLatin1(sizes[i]),
                                               "",
                                               Algorithm::Auto);
                qInfo("%-20s %6s model %6.1f GB/s (%s) measured %6.1f error %+5.1f%%",
                      c.layout,
                      sizes[i],
                      r.busbwGBps,
                      toString(r.algorithm),
                      c.measured[i],
                      100 * (r.busbwGBps - c.measured[i]) / c.measured[i]);
                QVERIFY(r.busbwGBps >= previous);
                previous = r.busbwGBps;
            }
        }
        const CollectiveResult one = run(load(QStringLiteral("gb200-nvl72-1rack")),
                                         CollectiveOp::AllReduce,
                                         "16GiB",
                                         "",
                                         Algorithm::Auto);
        const CollectiveResult twenty = run(load(QStringLiteral("gb200-nvl72-20racks")),
                                            CollectiveOp::AllReduce,
                                            "16GiB",
                                            "",
                                            Algorithm::Auto);
        QCOMPARE(QString::fromStdString(twenty.bottleneck), QStringLiteral("NIC uplinks"));
        QVERIFY(twenty.busbwGBps < 0.6 * one.busbwGBps);
    }

    // R4: eight GB200 in one NVLink domain all-reduce about ten times faster than the same
    // eight split over two trays joined by InfiniBand (811 against 85 GB/s measured; the IB
    // run's NIC setup is not described, so only the order is checked).
    void multiNodeNvlinkBeatsInfiniBand()
    {
        const CollectiveResult nvl = run(load(QStringLiteral("gb200-nvl72-1rack")),
                                         CollectiveOp::AllReduce,
                                         "8GiB",
                                         "0-7",
                                         Algorithm::Auto);
        const CollectiveResult ib = run(load(QStringLiteral("gb200-2trays-ib")),
                                        CollectiveOp::AllReduce,
                                        "8GiB",
                                        "",
                                        Algorithm::Auto);
        qInfo("8 GB200: one NVLink domain %.1f GB/s, two trays over IB %.1f GB/s",
              nvl.busbwGBps,
              ib.busbwGBps);
        QVERIFY(nvl.busbwGBps > 2.0 * ib.busbwGBps);
    }

    void linksCarryTheRingBytes()
    {
        // A ring all-reduce on one server: each GPU sends 2(n-1)/n x S over its NVLinks.
        const Topology t = load("h100-1node");
        CollectiveRequest req;
        req.bytes = 1e9;
        req.algorithm = Algorithm::Ring;
        req.wantLinks = true;
        const CollectiveResult r = estimateCollective(t, req);
        double up = 0;
        for (const LinkBytes &lb : r.links)
            if (t.links()[static_cast<std::size_t>(lb.link)].a == 0)
                up += lb.up;
        QCOMPARE(qRound64(up), qRound64(2.0 * 7 / 8 * 1e9));
        QCOMPARE(int(r.links.size()), 32); // 8 GPUs x 4 NVSwitch links
    }

    void crossServerRingLoadsRails()
    {
        // GPU 3 of two servers: the bytes go GPU -> PCIe -> NIC 3 -> leaf of rail 3 -> NIC 3.
        const Topology t = load("h100-roce-2node");
        CollectiveRequest req;
        req.bytes = 1e9;
        req.gpus = {3, 11};
        req.algorithm = Algorithm::Ring;
        req.wantLinks = true;
        const CollectiveResult r = estimateCollective(t, req);
        bool rail3 = false, spine = false;
        for (const LinkBytes &lb : r.links) {
            const Link &l = t.links()[static_cast<std::size_t>(lb.link)];
            const Device &a = t.devices()[static_cast<std::size_t>(l.a)];
            const Device &b = t.devices()[static_cast<std::size_t>(l.b)];
            if (a.kind == DeviceKind::Nic && b.kind == DeviceKind::Leaf)
                rail3 = rail3 || (a.rail == 3 && b.rail == 3 && lb.up > 0);
            spine = spine || b.kind == DeviceKind::Spine;
        }
        QVERIFY(rail3);
        QVERIFY(!spine);
        QCOMPARE(QString::fromStdString(r.bottleneck), QStringLiteral("NIC uplinks"));
    }

    void ecmpCollisions()
    {
        // One flow per uplink on average: the busiest uplink carries several, so ECMP gets a
        // fraction of the bandwidth; more queue pairs per connection spread the load.
        const double one = ecmpEfficiency(32, 32);
        const double four = ecmpEfficiency(128, 32);
        qInfo("ECMP efficiency, 32 uplinks: 1 QP %.2f, 4 QPs %.2f", one, four);
        QVERIFY(one > 0.2 && one < 0.45);
        QVERIFY(four > one * 1.3);
        QCOMPARE(ecmpEfficiency(1, 1), 1.0);
        // Many flows per uplink average out: the busiest uplink carries about lambda + 2.07
        // sqrt(lambda) flows (2.07: the expected largest of 32 standard normals), so 1,000 flows
        // per uplink over 32 uplinks give 1 / (1 + 2.07 / sqrt(1000)) = 0.939, and 10,000 give
        // 0.980. (exp(-lambda) underflowed past 745 flows per uplink and the sum ran to its cap
        // of 100,000 terms: 0.01, after a second.)
        const double many = ecmpEfficiency(32 * 1000, 32), more = ecmpEfficiency(32 * 10000, 32);
        qInfo("ECMP efficiency, 32 uplinks: 1,000 flows each %.3f, 10,000 each %.3f", many, more);
        RAILYARD_COMPARE_ABS(many, 0.939, 0.01);
        RAILYARD_COMPARE_ABS(more, 0.980, 0.005);
        QVERIFY(more > many && many > four);
    }

    // The expected maximum on Boost.Math's Poisson CDF gives what the hand-rolled sum it
    // replaced gave wherever that sum was right (means up to 700 flows per uplink: exp(-lambda)
    // is still a normal double), to 1e-9, and the right answer past it, where that sum
    // underflowed (0.0075 at 746 flows, 0.01 at 1,000): the reference values at large means are
    // the same sum taken with mpmath at 40 digits.
    void ecmpMatchesThePoissonSum()
    {
        const auto handRolled = [](double flows, double paths) {
            const double lambda = flows / paths;
            double expectedMax = 0;
            double pmf = std::exp(-lambda);
            double cdf = pmf;
            for (int t = 1; t < 100000; ++t) {
                const double p = 1.0 - std::pow(cdf, paths);
                expectedMax += p;
                if (p < 1e-9 && t > lambda)
                    break;
                pmf *= lambda / t;
                cdf += pmf;
            }
            expectedMax = std::max(expectedMax, std::ceil(lambda - 1e-9));
            return std::min(1.0, lambda / expectedMax);
        };
        int compared = 0;
        for (double paths : {2.0, 3.0, 8.0, 32.0, 64.0, 256.0, 1000.0})
            for (double lambda : {0.01, 0.3, 1.0, 1.5, 4.0, 7.5, 31.0, 100.0, 300.0, 700.0}) {
                const double flows = lambda * paths;
                const double now = ecmpEfficiency(flows, paths);
                const double old = handRolled(flows, paths);
                QVERIFY2(std::abs(now - old) < 1e-9,
                         qPrintable(QStringLiteral("%1 flows on %2 paths: %3, the sum gave %4")
                                            .arg(flows)
                                            .arg(paths)
                                            .arg(now, 0, 'g', 17)
                                            .arg(old, 0, 'g', 17)));
                ++compared;
            }
        QCOMPARE(compared, 70);
        QVERIFY(handRolled(32 * 1000, 32) < 0.02); // the underflow the old sum had
        struct Reference
        {
            double paths, lambda, efficiency;
        };
        for (const Reference &r : {Reference{32, 746, 0.928889952294461},
                                   Reference{32, 1000, 0.938059983441862},
                                   Reference{32, 10000, 0.979666781350475},
                                   Reference{256, 5000, 0.961339820853307},
                                   Reference{1000, 5000, 0.955876533364435},
                                   Reference{1000, 10000, 0.96845332203114},
                                   Reference{1000, 100000, 0.989837974706499}}) {
            const double now = ecmpEfficiency(r.lambda * r.paths, r.paths);
            QVERIFY2(std::abs(now - r.efficiency) < 1e-9,
                     qPrintable(QStringLiteral("%1 flows per uplink on %2: %3, expected %4")
                                        .arg(r.lambda)
                                        .arg(r.paths)
                                        .arg(now, 0, 'g', 17)
                                        .arg(r.efficiency, 0, 'g', 17)));
        }
    }

    void impossibleRequests()
    {
        const Topology a100 = load("a100-1node");
        QVERIFY_THROWS_EXCEPTION(InputError,
                                 run(a100, CollectiveOp::AllReduce, "1GB", "", Algorithm::Nvls));
        QVERIFY_THROWS_EXCEPTION(InputError,
                                 run(a100, CollectiveOp::AllReduce, "1GB", "", Algorithm::Tree));
        QVERIFY_THROWS_EXCEPTION(InputError,
                                 run(a100, CollectiveOp::AllReduce, "1GB", "", Algorithm::Sharp));
        QVERIFY_THROWS_EXCEPTION(InputError,
                                 run(a100, CollectiveOp::AllReduce, "1GB", "3", Algorithm::Ring));
    }
};

QTEST_APPLESS_MAIN(TestCollectives)
#include "tst_collectives.moc"
