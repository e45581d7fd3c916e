// Fault sweeps (every element of a kind failed in turn, ranked), their symmetry shortcuts
// (checked against pricing every element), what a layout's faults cost, and the recovery.
#include "base/jsoncursor.h"
#include "faults/faultimpact.h"
#include "faults/faultreport.h"
#include "faults/faultsweep.h"
#include "layout/layout.h"
#include "step/evaluate.h"
#include "topology/topology.h"

#include "comparenear.h"
#include <QTest>

using namespace railyard::engine;

namespace {

Layout llama8b(ClusterConfig cluster, int tp, int dp, int globalBatch)
{
    Layout l;
    l.cluster = std::move(cluster);
    ModelConfig m;
    m.preset = "llama3-8b";
    l.model = m;
    l.training.globalBatch = globalBatch;
    l.parallel.tp = tp;
    l.parallel.dp = dp;
    return l;
}

// A data-parallel-heavy job on an oversubscribed fabric: 52 A100 servers with 200G HDR NICs
// under 40-port switches at 2:1 (two scalable units of 26 servers, each leaf 13 lanes up to 6
// spines), TP4 (two TP groups in each server), DP104 across, DP not overlapped, and the servers of
// consecutive replica pairs alternating between the two units (as a scheduler that scatters
// nodes would): every DP ring step between servers crosses the spine, so the leaves' uplinks,
// not the NICs, bound the gradient reduction. (With TP8, one GPU per server in each DP group,
// NCCL runs PAT, whose exchanges at even distances stay inside a unit with this placement: the
// spine would hardly matter.)
Layout dpHeavy()
{
    ClusterConfig c;
    c.gpu = "A100-SXM-80GB";
    c.nodes = 52;
    c.nic.gbitPerS = 200;
    c.fabric.oversubscription = 2;
    Layout l = llama8b(c, 4, 104, 104);
    l.training.overlap.dp = false;
    for (int dp = 0; dp < 104; ++dp)
        for (int tp = 0; tp < 4; ++tp)
            l.mapping.push_back((((dp / 2) % 2) * 26 + dp / 4) * 8 + (dp % 2) * 4 + tp);
    return l;
}

ClusterConfig hgx(int nodes)
{
    ClusterConfig c;
    c.nodes = nodes;
    return c;
}

Topology build(const Layout &l)
{
    return buildTopology(l.cluster, Catalog::builtin());
}

} // namespace

class TestFaultSweep : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void spineHurtsMoreThanANicForADpHeavyJob()
    {
        const Layout l = dpHeavy();
        const Topology t = build(l);
        QCOMPARE(t.shape().nodesPerLeafGroup, 26);
        QCOMPARE(t.shape().spines, 6);
        const SweepResult spines = sweepFaults(l, t, SweepKind::Spines);
        const SweepResult nics = sweepFaults(l, t, SweepKind::Nics);
        QVERIFY2(spines.ok && nics.ok, (spines.error + nics.error).c_str());
        QCOMPARE(spines.candidates, 6);
        QCOMPARE(nics.candidates, 416);
        QVERIFY(spines.ranked.front().ok && nics.ranked.front().ok);
        // By hand: the uplinks carry every NIC's DP traffic at half the NICs' rate (2:1), so
        // they bound the DP phase; one spine of 6 down leaves 5/6 of that: the DP phase takes
        // 6/5 as long. A NIC down makes two GPUs share one NIC, whose time then equals the
        // uplinks' (2 x S at the NIC rate = 26 x S over 13 lanes): no slower than before.
        qInfo("DP-heavy: spine %s costs %.2f%%, the worst NIC (%s) %.2f%%",
              spines.ranked.front().name.c_str(),
              100 * spines.ranked.front().costFraction,
              nics.ranked.front().name.c_str(),
              100 * nics.ranked.front().costFraction);
        QVERIFY(spines.ranked.front().costFraction > 0.02);
        QVERIFY(spines.ranked.front().costFraction > 4 * nics.ranked.front().costFraction);
    }

    void spinesPricedBySymmetryAreExact()
    {
        // One spine priced for all six; pricing each one gives the same step, to the bit.
        const Layout l = dpHeavy();
        const Topology healthy = build(l);
        const SweepResult s = sweepFaults(l, healthy, SweepKind::Spines);
        QCOMPARE(s.priced, 1);
        QVERIFY(!s.symmetry.empty());
        EvaluationWorkspace workspace;
        EvaluateOptions fast;
        fast.linkLoads = false;
        fast.timeline = false;
        for (const SweepEntry &e : s.ranked) {
            Layout one = l;
            one.cluster.faults = {e.fault};
            const Evaluation each = evaluate(one,
                                             withFaults(healthy, one.cluster.faults),
                                             workspace,
                                             fast);
            QVERIFY2(each.ok, each.error.c_str());
            QCOMPARE(each.stepTimeS, e.stepTimeS);
        }
    }

    void gpusPricedOncePerReplica()
    {
        // Four servers, TP8 DP4, no spare: a GPU out drops its replica, whichever it was.
        const Layout l = llama8b(hgx(4), 8, 4, 32);
        const Topology healthy = build(l);
        const SweepResult s = sweepFaults(l, healthy, SweepKind::Gpus);
        QVERIFY2(s.ok, s.error.c_str());
        QCOMPARE(s.candidates, 32);
        QCOMPARE(s.priced, 4);
        // Checked against pricing GPUs of replica 2 one by one.
        EvaluationWorkspace workspace;
        for (int g : {16, 19, 23}) {
            Layout one = l;
            Fault f;
            f.device = "GPU " + std::to_string(g);
            one.cluster.faults = {f};
            const Evaluation e = evaluate(one, withFaults(healthy, one.cluster.faults), workspace);
            QVERIFY2(e.ok, e.error.c_str());
            const auto it = std::find_if(s.ranked.begin(),
                                         s.ranked.end(),
                                         [&](const SweepEntry &x) { return x.name == f.device; });
            QVERIFY(it != s.ranked.end());
            QCOMPARE(it->stepTimeS, e.stepTimeS);
        }
    }

    void leafSweepRanksAndReports()
    {
        // On the GMI-style H200 cluster (16 servers, one unit): every leaf is a whole rail.
        const Layout l = readLayoutFile(RAILYARD_TEST_DATA "/gmi-h200-cluster.railyard.json");
        const Topology healthy = build(l);
        const SweepResult s = sweepFaults(l, healthy, SweepKind::Leaves, SweepOptions{2, {}});
        QVERIFY2(s.ok, s.error.c_str());
        QCOMPARE(s.candidates, 8);
        // TP8 in every server, rails alike: one leaf priced for the unit's eight; each checked.
        QCOMPARE(s.priced, 1);
        QCOMPARE(s.symmetry.size(), std::size_t(1));
        EvaluationWorkspace workspace;
        for (const SweepEntry &e : s.ranked) {
            Layout one = l;
            one.cluster.faults = {e.fault};
            const Evaluation each = evaluate(one,
                                             withFaults(healthy, one.cluster.faults),
                                             workspace);
            QVERIFY2(each.ok, each.error.c_str());
            RAILYARD_COMPARE_NEAR(e.stepTimeS, each.stepTimeS, 1e-12);
        }
        for (std::size_t i = 1; i < s.ranked.size(); ++i)
            QVERIFY(s.ranked[i - 1].costFraction >= s.ranked[i].costFraction);
        const Json j = sweepJson(s, 3);
        QCOMPARE(j["ranked"].size(), std::size_t(3));
        QCOMPARE(j["what_if"].get<std::string>(), std::string("leaves"));
        QCOMPARE(j["ranked"][0]["rank"].get<int>(), 1);
        // NICs: one per server priced (16 of 128); those of server 5 checked one by one.
        const SweepResult nics = sweepFaults(l, healthy, SweepKind::Nics);
        QCOMPARE(nics.candidates, 128);
        QCOMPARE(nics.priced, 16);
        for (const SweepEntry &e : nics.ranked) {
            if (e.name.rfind("NIC 5.", 0) != 0)
                continue;
            Layout one = l;
            one.cluster.faults = {e.fault};
            const Evaluation each = evaluate(one,
                                             withFaults(healthy, one.cluster.faults),
                                             workspace);
            RAILYARD_COMPARE_NEAR(e.stepTimeS, each.stepTimeS, 1e-12);
        }
        // Where TP does not fill the server, the rails are not interchangeable: each leaf is
        // priced.
        Layout tp4 = l;
        tp4.parallel.tp = 4;
        tp4.parallel.pp = 8;
        QCOMPARE(sweepFaults(tp4, healthy, SweepKind::Leaves).priced, 8);
        // Nor where one server's GPUs take its TP ranks in another order (its TP ranks 0 and 1
        // swapped: the DP and PP groups of rails 0 and 1 cross rails there).
        Layout swapped = l;
        for (int g = 0; g < healthy.gpuCount(); ++g)
            swapped.mapping.push_back(g < 2 ? 1 - g : g);
        const SweepResult crossed = sweepFaults(swapped, healthy, SweepKind::Leaves);
        QVERIFY2(crossed.ok, crossed.error.c_str());
        QCOMPARE(crossed.priced, 8);
        QVERIFY(crossed.symmetry.empty());
        // Cancelling after the second evaluation keeps what was priced.
        SweepOptions cancel;
        cancel.threads = 1;
        cancel.progress = [](int done, int) { return done < 2; };
        const SweepResult part = sweepFaults(tp4, healthy, SweepKind::Leaves, cancel);
        QVERIFY(part.cancelled);
        QCOMPARE(part.priced, 2);
        QCOMPARE(part.ranked.size(), std::size_t(2));
    }

    void impactOfALeafDown()
    {
        // Leaf 0 down on the GMI cluster: rail 0's GPUs use NIC 1 under the same PCIe switch,
        // so those NICs carry twice their bytes; the report lists them first.
        Layout l = readLayoutFile(RAILYARD_TEST_DATA "/gmi-h200-cluster.railyard.json");
        Fault f;
        f.device = "leaf 0";
        l.cluster.faults = {f};
        const Topology healthy = build(withoutFaults(l));
        const Topology faulted = withFaults(healthy, l.cluster.faults);
        const FaultImpact impact = analyzeFaults(l, healthy, faulted);
        QVERIFY2(impact.healthy.ok && impact.faulted.ok, impact.faulted.error.c_str());
        QVERIFY(!impact.links.empty());
        const LinkChange &top = impact.links.front();
        QVERIFY(top.utilizationB > top.utilizationA);
        RAILYARD_COMPARE_NEAR(top.bytesB, 2 * top.bytesA, 1e-5);
        QVERIFY(impact.faulted.stepTimeS >= impact.healthy.stepTimeS);
        QCOMPARE(impact.breakdown.size(), std::size_t(8));
        const Json j = faultImpactJson(impact, faulted);
        QCOMPARE(j["faults"].size(), std::size_t(1));
        QCOMPARE(j["faults"][0]["description"].get<std::string>(), std::string("leaf 0 down"));
        QVERIFY(j["metrics"].contains("step_time_s"));
        QVERIFY(j["links_changed"].size() > 0);
    }

    void stragglerRecovery()
    {
        // A 30% straggler in a DP16 job: dropping its replica (DP 15, the global batch of 240
        // kept: 16 micro-batches per replica instead of 15) costs 1/16 of the throughput where
        // the straggler costs about 1 - 1/1.3 = 23%: it recovers most of the loss. The
        // recovery's layout prices as it says.
        Layout l = llama8b(hgx(16), 8, 16, 240);
        Fault f;
        f.device = "GPU 9";
        f.state = FaultState::Degraded;
        f.slowdown = 1.3;
        l.cluster.faults = {f};
        const Topology healthy = build(withoutFaults(l));
        const Topology faulted = withFaults(healthy, l.cluster.faults);
        const FaultImpact impact = analyzeFaults(l, healthy, faulted);
        QVERIFY(impact.recovery.has_value());
        const Recovery &r = *impact.recovery;
        qInfo("straggler recovery: %s, %.1f%% back (%s)",
              r.summary.c_str(),
              100 * r.recovered,
              r.price.c_str());
        QCOMPARE(r.kind, std::string("smaller-dp"));
        QCOMPARE(r.layout.dataParallel(), 15);
        QCOMPARE(r.layout.training.globalBatch, 240);
        QVERIFY(r.recovered > 0.5);
        QCOMPARE(r.idleGpus, 8);
        const Evaluation again = evaluate(r.layout, faulted);
        QVERIFY2(again.ok, again.error.c_str());
        RAILYARD_COMPARE_NEAR(again.stepTimeS, r.stepTimeS, 1e-12);
        const Json change = recoveryChangeJson(l, r.layout);
        QCOMPARE(change["parallel"]["dp"].get<int>(), 15);
        QCOMPARE(change["mapping"].size(), std::size_t(120));
    }
};

QTEST_GUILESS_MAIN(TestFaultSweep)
#include "tst_faultsweep.moc"
