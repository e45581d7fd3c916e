// The planner's collective patterns price a few groups for all of them (one period of groups
// that span the cluster, one rail of identical rails: plannerpatterns.cpp): what they give must
// be what pricing every group gives (and what the previous way, whole periods, gave), on
// rail-optimized, three-tier, oversubscribed, NVL72 and explicit-server clusters.
#include "collectives/collective.h"
#include "import/importer.h"
#include "layout/layout.h"
#include "planner/plannerpatterns.h"
#include "topology/topology.h"

#include <QTest>

#include <cmath>

using namespace railyard::engine;

namespace {

Layout shipped(const char *name)
{
    return readLayoutFile(std::string(RAILYARD_SOURCE_DIR "/layouts/") + name);
}

Layout example(const char *name)
{
    return readLayoutFile(std::string(RAILYARD_TEST_DATA "/") + name);
}

// A server read from an NCCL topology dump, on `nodes` servers (the importer's fabric).
Layout imported(const char *name, int nodes)
{
    Layout l = layoutFromImport(importFile(std::string(RAILYARD_TEST_DATA "/import/") + name),
                                Catalog::builtin());
    l.cluster.nodes = nodes;
    return l;
}

struct Shape
{
    int n, stride;
};

// Every (n, stride) whose blocks n x stride tile the cluster, n >= 2.
std::vector<Shape> everyShape(int gpus)
{
    std::vector<Shape> out;
    for (int block = 2; block <= gpus; ++block)
        if (gpus % block == 0)
            for (int n = 2; n <= block; ++n)
                if (block % n == 0)
                    out.push_back({n, block / n});
    return out;
}

double relative(double a, double b)
{
    return a == b ? 0.0 : std::abs(a - b) / std::max(std::abs(a), std::abs(b));
}

} // namespace

Q_DECLARE_METATYPE(railyard::engine::Layout)
Q_DECLARE_METATYPE(std::vector<Shape>)

class TestPlannerPatterns : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void symmetricGroupsPriceAsEveryGroup_data()
    {
        QTest::addColumn<Layout>("layout");
        QTest::addColumn<std::vector<Shape>>("shapes");
        QTest::addColumn<bool>("fewer"); // the symmetries apply
        // Llama 3.1 405B's cluster at 2,048 H100 (eight scalable units of 256 GPUs): groups
        // at strides of 512 and 1,024 span it.
        Layout rail = shipped("llama3.1-405b-16k-h100.railyard.json");
        rail.cluster.nodes = 256;
        QTest::newRow("rail-optimized-2048") << rail << everyShape(2048) << true;
        // At 16,384: pipelines (send/recv at strides 1,024 and 2,048), DP trees, all-gathers,
        // all-to-all and groups alone in their window, of the planner's search.
        QTest::newRow("rail-optimized-16384") << shipped("llama3.1-405b-16k-h100.railyard.json")
                                              << std::vector<Shape>{{16, 1024},
                                                                    {8, 2048},
                                                                    {32, 512},
                                                                    {128, 128},
                                                                    {256, 64},
                                                                    {8, 1},
                                                                    {8192, 2},
                                                                    {16384, 1}}
                                              << true;
        // Three tiers (two pods of 1,024), ECMP hashing: each pod's uplinks to the core.
        Layout tiers = example("example.railyard.json");
        tiers.cluster.nodes = 256;
        tiers.cluster.fabric.kind = FabricKind::ThreeTier;
        tiers.cluster.tuning.adaptiveRouting = false;
        QTest::newRow("three-tier-ecmp") << tiers << everyShape(2048) << false;
        // Four pods: pairs of GPUs 2,048 apart span the cluster.
        tiers.cluster.nodes = 512;
        QTest::newRow("three-tier-ecmp-4096")
                << tiers << std::vector<Shape>{{2, 2048}, {2, 1024}, {4, 1024}} << true;
        // A 2:1 oversubscribed spine with 42 servers per unit: no period, every group priced.
        Layout over = example("example.railyard.json");
        over.cluster.nodes = 128;
        over.cluster.fabric.oversubscription = 2;
        over.cluster.tuning.adaptiveRouting = false;
        QTest::newRow("oversubscribed") << over << everyShape(1024) << true;
        // GB200 NVL72: NVLink domains of 72 GPUs over 18 trays of 4.
        QTest::newRow("nvl72-two-racks")
                << shipped("gb200-nvl72-two-racks-ib.railyard.json") << everyShape(144) << false;
        // Explicit servers as imported (layout format 2): IBM's H100 board (one NIC per GPU),
        // AWS p5 (four NICs per GPU, PCIe only as the dump shows it) and DGX-1's hybrid cube
        // mesh (direct NVLinks, NICs shared), on four scalable units of 20 servers.
        QTest::newRow("explicit-h100")
                << imported("nccl-topo-xml/ibm-cloud-gx3d-8xh100-topo.xml", 80) << everyShape(640)
                << true;
        QTest::newRow("explicit-p5-pcie") << imported("nccl-topo-xml/aws-p5.48xlarge-topo.xml", 80)
                                          << everyShape(640) << true;
        QTest::newRow("explicit-direct-mesh")
                << imported("topo-m/v100-8gpu-hybridcube-legacy-mlx5col-paddlefleetx.txt", 80)
                << everyShape(640) << true;
    }

    void symmetricGroupsPriceAsEveryGroup()
    {
        QFETCH(Layout, layout);
        QFETCH(std::vector<Shape>, shapes);
        const Topology topology = buildTopology(layout.cluster, Catalog::builtin());
        CollectivePatterns fast(topology);
        CollectivePatterns periods(topology, PatternGroups::Periods);
        CollectivePatterns every(topology, PatternGroups::All);
        // Sizes from latency-bound to bandwidth-bound: NCCL's choice moves from trees to rings.
        const double sizes[] = {4e3, 2e6, 3e8, 1e10};
        const CollectiveOp ops[] = {CollectiveOp::AllReduce,
                                    CollectiveOp::AllGather,
                                    CollectiveOp::AllToAll,
                                    CollectiveOp::SendRecv};
        int compared = 0;
        double worst = 0;
        for (const Shape &s : shapes)
            for (CollectiveOp op : ops) {
                const int a = fast.find(op, s.n, s.stride);
                const int b = every.find(op, s.n, s.stride);
                const int c = periods.find(op, s.n, s.stride);
                for (double bytes : sizes) {
                    const CollectiveCost x = fast.price(a, bytes);
                    const CollectiveCost y = every.price(b, bytes);
                    const CollectiveCost z = periods.price(c, bytes);
                    const QString where = QString("%1 n%2 stride %3, %4 bytes")
                                                  .arg(toString(op))
                                                  .arg(s.n)
                                                  .arg(s.stride)
                                                  .arg(bytes);
                    QVERIFY2(y.timeS > 0, qPrintable(where));
                    QVERIFY2(x.algorithm == y.algorithm, qPrintable(where));
                    for (const auto &[mine, theirs] : {std::pair{x.timeS, y.timeS},
                                                       {x.latencyS, y.latencyS},
                                                       {x.bwTimeS, y.bwTimeS},
                                                       {x.timeS, z.timeS}}) {
                        worst = std::max(worst, relative(mine, theirs));
                        QVERIFY2(relative(mine, theirs) <= 1e-9,
                                 qPrintable(where
                                            + QString(": %1 s against %2 s")
                                                      .arg(mine, 0, 'g', 17)
                                                      .arg(theirs, 0, 'g', 17)));
                    }
                    ++compared;
                }
            }
        QVERIFY(compared >= 4 * 4 * int(shapes.size()));
        QFETCH(bool, fewer);
        // Where the topology repeats, fewer groups were put on the links.
        if (fewer)
            QVERIFY2(fast.groupsPriced() < periods.groupsPriced(),
                     qPrintable(QString("%1 groups, %2 by whole periods")
                                        .arg(fast.groupsPriced())
                                        .arg(periods.groupsPriced())));
        qInfo("%d prices compared, worst relative difference %.2e", compared, worst);
    }
};

QTEST_GUILESS_MAIN(TestPlannerPatterns)
#include "tst_plannerpatterns.moc"
