#include "base/jsoncursor.h"
#include "collectives/collective.h"
#include "layout/layout.h"
#include "topology/topology.h"

#include "comparenear.h"
#include <QTest>

using namespace railyard::engine;

// The seed article's worked example ("Estimating Communication Cost Before You Scale"): a ring
// all-reduce of 14 GB (7B parameters, BF16 gradients) at 80% of link bandwidth.
class TestFlatRing : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void seedNumbers_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("gpus");
        QTest::addColumn<double>("expectedSeconds");
        QTest::addColumn<double>("expectedBottleneck");
        // 2(N-1)/N x 14 GB / (450 GB/s x 0.8) and / (50 GB/s x 0.8): 0.06806 s and 0.69453 s.
        // The article prints "~0.068" and "~0.694", so the tolerance is one millisecond.
        QTest::newRow("one 8-GPU server, NVLink")
                << "seed-1-server.railyard.json" << 8 << 0.068 << 360.0;
        QTest::newRow("16 servers, 400G per GPU")
                << "seed-16-servers.railyard.json" << 128 << 0.694 << 40.0;
    }
    void seedNumbers()
    {
        QFETCH(QString, file);
        QFETCH(int, gpus);
        QFETCH(double, expectedSeconds);
        QFETCH(double, expectedBottleneck);
        const Layout l = readLayoutFile(std::string(RAILYARD_TEST_DATA "/") + file.toStdString());
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        QCOMPARE(t.gpuCount(), gpus);
        CollectiveRequest req;
        req.op = CollectiveOp::AllReduce;
        req.bytes = 14e9;
        req.algorithm = Algorithm::FlatRing;
        req.efficiency = l.cluster.tuning.efficiency.value_or(1.0);
        const CollectiveResult r = estimateCollective(t, req);
        qInfo("%s: %.4f s (seed %.3f s), bottleneck %.1f GB/s",
              qPrintable(file),
              r.timeS,
              expectedSeconds,
              r.bottleneckGBps);
        RAILYARD_COMPARE_ABS(r.timeS, expectedSeconds, 0.001);
        QCOMPARE(r.bottleneckGBps, expectedBottleneck);
        // nccl-tests definitions: algbw = S / t, busbw = algbw x 2(n-1)/n = the per-GPU rate.
        RAILYARD_COMPARE_ABS(r.algbwGBps, 14.0 / r.timeS, 1e-9);
        RAILYARD_COMPARE_ABS(r.busbwGBps, expectedBottleneck, 1e-9);
    }

    void efficiencyDefaultsToTextbook()
    {
        // With no efficiency given, the flat ring runs at the full line rate.
        Layout l;
        l.cluster.nodes = 1;
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        const CollectiveResult r = flatRing(t,
                                            CollectiveOp::AllReduce,
                                            14e9,
                                            {0, 1, 2, 3, 4, 5, 6, 7},
                                            1.0);
        RAILYARD_COMPARE_ABS(r.timeS, 2.0 * 7 / 8 * 14e9 / 450e9, 1e-12);
    }

    void otherOpsUseTheirBusFactor()
    {
        Layout l;
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        const std::vector<int> g{0, 1, 2, 3};
        const double ar = flatRing(t, CollectiveOp::AllReduce, 1e9, g, 1.0).timeS;
        const double ag = flatRing(t, CollectiveOp::AllGather, 1e9, g, 1.0).timeS;
        RAILYARD_COMPARE_ABS(ar, 2 * ag, 1e-12);
    }

    void tooFewRanks()
    {
        Layout l;
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        QVERIFY_THROWS_EXCEPTION(InputError, flatRing(t, CollectiveOp::AllReduce, 1e9, {3}, 1.0));
    }
};

QTEST_APPLESS_MAIN(TestFlatRing)
#include "tst_flatring.moc"
