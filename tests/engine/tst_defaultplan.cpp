// The parallel sizes a workload starts from on a new cluster: valid, within HBM, TP inside the
// NVLink domain before PP, as little model parallelism as fits.
#include "layout/layout.h"
#include "planner/defaultplan.h"
#include "step/evaluate.h"
#include "topology/topology.h"

#include "comparenear.h"
#include <QTest>

using namespace railyard::engine;

namespace {

Layout example(const char *name = "example.railyard.json")
{
    return readLayoutFile(std::string(RAILYARD_TEST_DATA "/") + name);
}

Evaluation priced(const Layout &l)
{
    const Topology t = buildTopology(l.cluster, Catalog::builtin());
    return evaluate(l, t, {.linkLoads = false, .timeline = false});
}

double mostMemory(const Evaluation &e)
{
    double m = 0;
    for (double g : e.memoryGiBPerStage)
        m = std::max(m, g);
    return m;
}

bool outOfMemory(const Evaluation &e)
{
    for (const Warning &w : e.warnings)
        if (w.code == "out-of-memory")
            return true;
    return false;
}

ModelConfig preset(const char *name)
{
    ModelConfig m;
    m.preset = name;
    return m;
}

DefaultPlan planFor(const Layout &l)
{
    const Topology t = buildTopology(l.cluster, Catalog::builtin());
    return defaultPlan(l, t);
}

} // namespace

class TestDefaultPlan : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // The case: Llama 3 70B at TP 1 PP 1 is out of memory on every GPU; the plan is not.
    void seventyBillionFitsWithTensorParallelism()
    {
        Layout l = example(); // llama3-70b on 16 x 8 H200
        l.parallel = ParallelConfig{};
        const Evaluation naive = priced(l);
        QVERIFY(naive.ok);
        QVERIFY(outOfMemory(naive));

        const DefaultPlan plan = planFor(l);
        QVERIFY2(plan.fits, plan.reason.c_str());
        QVERIFY(plan.reason.empty());
        QVERIFY(plan.parallel.tp > 1);
        QVERIFY(plan.parallel.tp <= l.cluster.nvlinkDomain);
        QCOMPARE(plan.parallel.pp, 1); // a TP inside the server suffices on H200
        QVERIFY(plan.evaluated >= 2);

        const Layout planned = withPlan(l, plan);
        QVERIFY(planned.mapping.empty());
        const Evaluation e = priced(planned);
        QVERIFY2(e.ok, e.error.c_str());
        QVERIFY(!outOfMemory(e));
        QVERIFY(mostMemory(e) <= e.hbmGiB);
        QCOMPARE(plan.memoryGiB, mostMemory(e));
        RAILYARD_COMPARE_ABS(plan.hbmGiB, e.hbmGiB, 1e-9);

        // The smallest TP that fits: half of it does not.
        Layout half = planned;
        half.parallel.tp = plan.parallel.tp / 2;
        const Evaluation smaller = priced(half);
        QVERIFY(smaller.ok);
        QVERIFY(mostMemory(smaller) > smaller.hbmGiB);
    }

    // A model that fits one GPU keeps TP 1 and PP 1: all data parallelism.
    void smallModelIsAllDataParallel()
    {
        Layout l = example();
        l.model = preset("llama3-8b");
        l.parallel.tp = 4; // ignored: the plan starts over
        const DefaultPlan plan = planFor(l);
        QVERIFY2(plan.fits, plan.reason.c_str());
        QCOMPARE(plan.parallel.tp, 1);
        QCOMPARE(plan.parallel.pp, 1);
        QCOMPARE(plan.parallel.order, std::string(kTopologyAwareOrder));
        QCOMPARE(plan.evaluated, 1);
    }

    // More replicas than the global batch splits into: the batch grows to the next multiple.
    void globalBatchFollowsTheReplicas()
    {
        Layout l = example();
        l.model = preset("llama3-8b");
        l.cluster.nodes = 64; // 512 GPUs, DP 512 at TP 1
        l.training.globalBatch = 256;
        l.training.microBatch = 1;
        const DefaultPlan plan = planFor(l);
        QVERIFY2(plan.fits, plan.reason.c_str());
        const int dp = l.cluster.gpuCount() / (plan.parallel.tp * plan.parallel.pp);
        QCOMPARE(plan.globalBatch % dp, 0);
        QVERIFY(plan.globalBatch >= 256);
        QVERIFY(plan.globalBatch < 256 + dp);
        QVERIFY(priced(withPlan(l, plan)).ok);
    }

    // 405B on one server fits nowhere: the least memory, and the reason in words.
    void tooBigSaysWhy()
    {
        Layout l = example();
        l.model = preset("llama3.1-405b");
        l.cluster.nodes = 1;
        const DefaultPlan plan = planFor(l);
        QVERIFY(!plan.fits);
        QVERIFY(plan.memoryGiB > plan.hbmGiB);
        QVERIFY2(plan.reason.find("llama3.1-405b") != std::string::npos, plan.reason.c_str());
        QVERIFY2(plan.reason.find("add servers") != std::string::npos, plan.reason.c_str());
        QVERIFY(plan.parallel.tp <= 8);
        // The least memory found: PP spreads the layers once TP is at the domain's size.
        QCOMPARE(plan.parallel.tp, 8);
        QVERIFY(priced(withPlan(l, plan)).ok);
    }

    // A mixture of experts spreads its experts (EP) when that is what makes it fit.
    void moeModelFits()
    {
        Layout l = example("example-moe.railyard.json"); // 128 experts on 16 H100
        const DefaultPlan plan = planFor(l);
        QVERIFY2(plan.fits, plan.reason.c_str());
        const Evaluation e = priced(withPlan(l, plan));
        QVERIFY2(e.ok, e.error.c_str());
        QVERIFY(!outOfMemory(e));
        QVERIFY(plan.parallel.tp <= 8);
        // 128 experts do not fit one GPU: they are spread, before any pipelining.
        QVERIFY(plan.parallel.ep > 1);
        QCOMPARE(plan.parallel.pp, 1);
    }

    // Without a model there is nothing to split: every size 1.
    void clusterOnly()
    {
        Layout l = example();
        l.model.reset();
        const DefaultPlan plan = planFor(l);
        QVERIFY(plan.fits);
        QCOMPARE(plan.parallel, ParallelConfig{});
        QCOMPARE(plan.evaluated, 0);
    }
};

QTEST_GUILESS_MAIN(TestDefaultPlan)
#include "tst_defaultplan.moc"
