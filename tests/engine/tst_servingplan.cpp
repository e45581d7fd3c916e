// The serving planner: the Pareto front of output tokens/s per GPU against tokens/s per user is a
// front (no point beats another on both), it is at least as good as the layout's own
// configuration, TTFT / TPOT limits hold on every point, MoE models get expert parallel plans,
// and a model that fits nowhere gives an empty front with the reason counted.
#include "layout/layout.h"
#include "planner/servingplan.h"
#include "serving/servingevaluate.h"
#include "topology/topology.h"

#include <QTest>

#include <atomic>

using namespace railyard::engine;

namespace {

Layout shipped(const char *file)
{
    return readLayoutFile(std::string(RAILYARD_SOURCE_DIR "/layouts/") + file);
}

// No point on the front is beaten on both axes by another, and the front runs from the fastest
// per user to the most per GPU.
void checkFront(const std::vector<ServingPlanPoint> &front)
{
    QVERIFY(!front.empty());
    for (std::size_t i = 1; i < front.size(); ++i) {
        QVERIFY(front[i].tokensPerSPerUser <= front[i - 1].tokensPerSPerUser);
        QVERIFY(front[i].outputTokensPerSPerGpu > front[i - 1].outputTokensPerSPerGpu);
    }
    for (const ServingPlanPoint &p : front) {
        QVERIFY(p.outputTokensPerSPerGpu > 0 && p.tokensPerSPerUser > 0);
        QVERIFY(p.concurrency >= 1);
    }
}

} // namespace

class TestServingPlan : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // Llama 70B on two H100 servers: the layout's own TP8 x 2 at 32 requests is one of the
    // configurations searched, so some point of the front serves at least as fast per user and
    // at least as much per GPU.
    void frontCoversTheLayout()
    {
        const Layout l = shipped("serving-llama70b-tp8-h100.railyard.json");
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        const ServingEvaluation own = evaluateServing(l, t);
        QVERIFY2(own.ok, own.error.c_str());
        const ServingPlanResult r = planServing(l, t);
        QVERIFY2(r.ok, r.error.c_str());
        checkFront(r.front);
        QVERIFY(r.evaluated > 100);
        bool covered = false;
        for (const ServingPlanPoint &p : r.front)
            covered = covered
                      || (p.tokensPerSPerUser >= own.tokensPerSPerUser * (1 - 1e-9)
                          && p.outputTokensPerSPerGpu >= own.outputTokensPerSPerGpu * (1 - 1e-9));
        QVERIFY(covered);
        // Every point uses all 16 GPUs, and the front holds aggregated and disaggregated plans.
        bool aggregated = false, split = false;
        for (const ServingPlanPoint &p : r.front) {
            QCOMPARE(p.gpus, 16);
            (p.disaggregated ? split : aggregated) = true;
        }
        QVERIFY(aggregated && split);
        qInfo("%lld configurations in %.3f s (%.0f per second), %zu on the front",
              r.evaluated,
              r.elapsedS,
              r.evaluated / r.elapsedS,
              r.front.size());
    }

    // Limits hold on every point; the limited front is the unlimited one's points that pass
    // (a limit removes points, never adds any).
    void limits()
    {
        const Layout l = shipped("serving-llama70b-tp8-h100.railyard.json");
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        const ServingPlanResult all = planServing(l, t);
        ServingPlanOptions o;
        o.ttftLimitS = 0.1;
        o.tpotLimitS = 0.010;
        const ServingPlanResult limited = planServing(l, t, o);
        QVERIFY2(limited.ok, limited.error.c_str());
        checkFront(limited.front);
        QVERIFY(limited.overLimits > 0);
        QCOMPARE(limited.evaluated, all.evaluated);
        for (const ServingPlanPoint &p : limited.front) {
            QVERIFY(p.ttftS <= 0.1);
            QVERIFY(p.tpotS <= 0.010);
        }
        // The most per GPU under 10 ms per token is below the unlimited most.
        QVERIFY(limited.front.back().outputTokensPerSPerGpu
                < all.front.back().outputTokensPerSPerGpu);
        // Nothing meets an impossible limit.
        o.tpotLimitS = 1e-6;
        const ServingPlanResult none = planServing(l, t, o);
        QVERIFY(none.ok);
        QVERIFY(none.front.empty());
        QCOMPARE(none.overLimits + none.infeasible, none.evaluated);
    }

    // DeepSeek-R1 on a GB200 NVL72: it fits only split over several GPUs; the front's
    // high-throughput end is wide expert parallelism with attention DP over the rack.
    void moeWideEp()
    {
        const Layout l = shipped("serving-deepseek-r1-wide-ep-gb200-nvl72.railyard.json");
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        const ServingPlanResult r = planServing(l, t);
        QVERIFY2(r.ok, r.error.c_str());
        checkFront(r.front);
        QVERIFY(r.infeasible > 0); // TP1 and TP2 do not hold 671B parameters
        for (const ServingPlanPoint &p : r.front)
            QVERIFY(p.serving.tp * p.serving.pp >= 4 || p.disaggregated);
        const ServingPlanPoint &most = r.front.back();
        QVERIFY(!most.disaggregated);
        QCOMPARE(most.serving.ep, most.serving.tp);
        QVERIFY(most.serving.ep >= 32);
        QVERIFY(most.serving.attentionDp.value_or(1) > 1);
    }

    // The planner prices what configurations share once (ServingPlanOptions::shareWork); the
    // front it returns is the one of evaluating every configuration from scratch, point for
    // point and bit for bit, on a dense model over two servers, on wide-EP DeepSeek-R1 on an
    // NVL72 and over InfiniBand (aggregated and disaggregated splits).
    void sharedWorkGivesTheExhaustiveFront_data()
    {
        QTest::addColumn<QString>("file");
        QTest::newRow("llama70b-tp8-h100")
                << QStringLiteral("serving-llama70b-tp8-h100.railyard.json");
        QTest::newRow("deepseek-r1-gb200-nvl72")
                << QStringLiteral("serving-deepseek-r1-wide-ep-gb200-nvl72.railyard.json");
        // Eight servers over InfiniBand: decode pools of one shape start on different servers
        // (after prefill pools of an eighth to a half of the GPUs) and share their decode steps
        // only where their collectives price the same; the KV transfer crosses the fabric.
        QTest::newRow("deepseek-r1-h200-ib")
                << QStringLiteral("serving-deepseek-r1-wide-ep-h200-ib.railyard.json");
    }
    void sharedWorkGivesTheExhaustiveFront()
    {
        QFETCH(QString, file);
        const Layout l = shipped(file.toUtf8().constData());
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        ServingPlanOptions exhaustive;
        exhaustive.shareWork = false;
        const ServingPlanResult slow = planServing(l, t, exhaustive);
        const ServingPlanResult fast = planServing(l, t);
        QVERIFY2(slow.ok && fast.ok, (slow.error + fast.error).c_str());
        checkFront(fast.front);
        QCOMPARE(fast.evaluated, slow.evaluated);
        QCOMPARE(fast.infeasible, slow.infeasible);
        QCOMPARE(fast.front.size(), slow.front.size());
        for (std::size_t i = 0; i < fast.front.size(); ++i) {
            const ServingPlanPoint &a = fast.front[i], &b = slow.front[i];
            QCOMPARE(a.disaggregated, b.disaggregated);
            const auto same = [](const ServingPool &x, const ServingPool &y) {
                return x.tp == y.tp && x.ep == y.ep && x.pp == y.pp && x.replicas == y.replicas
                       && x.attentionDp.value_or(1) == y.attentionDp.value_or(1);
            };
            QVERIFY(same(a.serving, b.serving) && same(a.prefill, b.prefill)
                    && same(a.decode, b.decode));
            QCOMPARE(a.concurrency, b.concurrency);
            QVERIFY2(a.outputTokensPerSPerGpu == b.outputTokensPerSPerGpu, "outputTokensPerSPerGpu");
            QVERIFY2(a.tokensPerSPerUser == b.tokensPerSPerUser, "tokensPerSPerUser");
            QVERIFY2(a.ttftS == b.ttftS, "ttftS");
            QVERIFY2(a.tpotS == b.tpotS, "tpotS");
            QVERIFY2(a.memoryGiBPerGpu == b.memoryGiBPerGpu, "memoryGiBPerGpu");
            QCOMPARE(a.maxConcurrency, b.maxConcurrency);
        }
        qInfo("%s: %lld configurations, exhaustive %.0f per second, shared %.0f per second, "
              "%zu on the front",
              qPrintable(file),
              fast.evaluated,
              slow.evaluated / slow.elapsedS,
              fast.evaluated / fast.elapsedS,
              fast.front.size());
    }

    // Cancel stops the search before the next configuration: a flag set from the progress
    // callback (called from the searching thread) ends it right after, with the front of what
    // was priced; progress rises from 0 towards 1; a flag set before it starts prices nothing.
    void cancelStopsTheSearch()
    {
        const Layout l = shipped("serving-deepseek-r1-wide-ep-gb200-nvl72.railyard.json");
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        const ServingPlanResult all = planServing(l, t);
        QVERIFY(!all.cancelled);
        QVERIFY(all.evaluated > 200);
        std::atomic<bool> cancel{false};
        ServingPlanOptions o;
        o.cancel = &cancel;
        o.progressIntervalS = 0;
        std::vector<ServingPlanProgress> seen;
        o.progress = [&](const ServingPlanProgress &p) {
            seen.push_back(p);
            if (p.evaluated >= 128)
                cancel = true;
        };
        const ServingPlanResult r = planServing(l, t, o);
        QVERIFY(r.ok && r.cancelled);
        QCOMPARE(r.evaluated, 129LL);
        QVERIFY(seen.size() >= 3);
        for (std::size_t i = 1; i < seen.size(); ++i) {
            QVERIFY(seen[i].evaluated > seen[i - 1].evaluated);
            QVERIFY(seen[i].fraction >= seen[i - 1].fraction);
        }
        QVERIFY(seen.front().fraction == 0 && seen.back().fraction < 1);
        // The front of the configurations priced: none beats a point of the whole front.
        for (const ServingPlanPoint &p : r.front)
            for (const ServingPlanPoint &q : all.front)
                QVERIFY(!(p.tokensPerSPerUser > q.tokensPerSPerUser
                          && p.outputTokensPerSPerGpu > q.outputTokensPerSPerGpu));
        cancel = true;
        const ServingPlanResult none = planServing(l, t, o);
        QVERIFY(none.ok && none.cancelled);
        QCOMPARE(none.evaluated, 0LL);
        QVERIFY(none.front.empty());
    }

    void notServing()
    {
        Layout l = shipped("serving-llama70b-tp8-h100.railyard.json");
        l.serving.reset();
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        const ServingPlanResult r = planServing(l, t);
        QVERIFY(!r.ok);
        QVERIFY(r.error.find("serving") != std::string::npos);
    }
};

QTEST_APPLESS_MAIN(TestServingPlan)
#include "tst_servingplan.moc"
