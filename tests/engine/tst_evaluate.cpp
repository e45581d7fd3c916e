#include "compare.h"
#include "evaluate.h"
#include "layout.h"
#include "topology.h"

#include <QTest>

using namespace railyard::engine;

namespace {

Layout example()
{
    return readLayoutFile(RAILYARD_TEST_DATA "/example.railyard.json");
}

Evaluation run(const Layout &l)
{
    const Topology t = buildTopology(l.cluster, Catalog::builtin());
    return evaluate(l, t);
}

bool hasWarning(const Evaluation &e, const std::string &code)
{
    for (const Warning &w : e.warnings)
        if (w.code == code)
            return true;
    return false;
}

} // namespace

class TestEvaluate : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void referenceExample()
    {
        const Evaluation e = run(example());
        QVERIFY2(e.ok, e.error.c_str());
        // The breakdown adds up to the step; throughput follows from tokens and time.
        QVERIFY(std::abs(e.exposed.sum() - e.stepTimeS) < 1e-9 * e.stepTimeS);
        QCOMPARE(e.tokensPerStep, 256.0 * 8192);
        QVERIFY(std::abs(e.tokensPerSPerGpu * 128 * e.stepTimeS - e.tokensPerStep) < 1e-3);
        QVERIFY(e.mfu > 0.2 && e.mfu < 0.7);
        QVERIFY(e.exposed.tp > 0);       // TP8 collectives on NVLink
        QVERIFY(e.exposed.ppBubble > 0); // PP4
        QVERIFY(e.memory.totalGiB() > 10 && e.memory.totalGiB() < e.hbmGiB);
        QVERIFY(e.costPerMillionTokens > 0);
        // Link loads: every GPU's NVLinks and NICs carry traffic; nothing runs above 100%
        // of a link for longer than the step.
        QVERIFY(e.links);
        QVERIFY(e.links->loaded > 128 * 4);
        float worst = 0;
        for (float u : e.links->utilization)
            worst = std::max(worst, u);
        QVERIFY(worst > 0.01f && worst <= 1.0f);
        // Each phase has a bottleneck link, saturated while the phase's bandwidth terms run.
        float peak = 0;
        for (std::size_t i = 0; i < e.links->size(); ++i) {
            peak = std::max(peak, e.links->peakUtilization[i]);
            QVERIFY(e.links->peakUtilization[i] >= e.links->utilization[i] - 1e-6f
                    || e.links->utilization[i] == 0);
        }
        QVERIFY(std::abs(peak - 1.0f) < 1e-3f);
        QVERIFY(!e.timeline.empty());
        QVERIFY(!e.flopConvention.empty());
    }

    // Moving one TP group across two servers puts its collectives on the NICs: TP time rises,
    // the placement warning names the group, and moving it back restores the numbers exactly.
    void tpGroupAcrossServers()
    {
        Layout l = example();
        const Evaluation before = run(l);
        // Swap GPU 4 (TP group 0) with GPU 12 (TP group 1, next server).
        l.mapping.resize(128);
        for (int r = 0; r < 128; ++r)
            l.mapping[static_cast<std::size_t>(r)] = r;
        std::swap(l.mapping[4], l.mapping[12]);
        const Evaluation moved = run(l);
        QVERIFY(moved.ok);
        qInfo("TP exposed: %.3f s -> %.3f s; step %.3f -> %.3f s",
              before.exposed.tp,
              moved.exposed.tp,
              before.stepTimeS,
              moved.stepTimeS);
        QVERIFY(moved.exposed.tp > 1.5 * before.exposed.tp);
        QVERIFY(moved.stepTimeS > before.stepTimeS);
        QVERIFY(hasWarning(moved, "tp-placement"));
        // The warning's cost is per step: the same order as the step's growth.
        for (const Warning &w : moved.warnings)
            if (w.code == "tp-placement")
                QVERIFY2(w.costS > 0.3 * (moved.stepTimeS - before.stepTimeS),
                         qPrintable(QString::number(w.costS)));
        bool named = false;
        for (const Warning &w : moved.warnings)
            named = named
                    || (w.code == "tp-placement"
                        && w.message.find("TP group 0 spans 2 NVLink domains") != std::string::npos);
        QVERIFY(named);
        std::swap(l.mapping[4], l.mapping[12]);
        const Evaluation back = run(l);
        QCOMPARE(back.stepTimeS, before.stepTimeS);
        QCOMPARE(back.exposed.tp, before.exposed.tp);
        QVERIFY(!hasWarning(back, "tp-placement"));
    }

    void impossibleConfigurations_data()
    {
        QTest::addColumn<int>("tp");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("dp");
        QTest::addColumn<int>("ep");
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QString>("message");
        QTest::newRow("sizes do not multiply") << 8 << 4 << 8 << 1 << "llama3-70b"
                                               << "but the cluster has 128 GPUs";
        QTest::newRow("PP above layers") << 1 << 128 << 1 << 1 << "llama2-7b"
                                         << "PP (128) is more than the model's 32 layers";
        QTest::newRow("EP above experts") << 1 << 1 << 128 << 16 << "mixtral-8x7b"
                                          << "EP (16) is more than the model's 8 experts";
    }
    void impossibleConfigurations()
    {
        QFETCH(int, tp);
        QFETCH(int, pp);
        QFETCH(int, dp);
        QFETCH(int, ep);
        QFETCH(QString, preset);
        QFETCH(QString, message);
        Layout l = example();
        l.parallel.tp = tp;
        l.parallel.pp = pp;
        l.parallel.vp = 1;
        l.parallel.dp = dp;
        l.parallel.ep = ep;
        l.model->preset = preset.toStdString();
        l.training.globalBatch = 1024;
        const Evaluation e = run(l);
        QVERIFY(!e.ok);
        QVERIFY2(QString::fromStdString(e.error).contains(message), e.error.c_str());
    }

    void doubtfulConfigurationsWarn_data()
    {
        QTest::addColumn<QString>("change");
        QTest::addColumn<QString>("code");
        QTest::newRow("TP does not divide heads") << "tp-heads"
                                                  << "tp-heads";
        QTest::newRow("batch not divisible") << "batch"
                                             << "batch-not-divisible";
        QTest::newRow("out of memory") << "oom"
                                       << "out-of-memory";
        QTest::newRow("uneven pipeline") << "layers"
                                         << "pp-layers";
        QTest::newRow("TP wider than NVLink") << "tp16"
                                              << "tp-larger-than-domain";
    }
    void doubtfulConfigurationsWarn()
    {
        QFETCH(QString, change);
        QFETCH(QString, code);
        Layout l = example();
        l.parallel.vp = 1;
        if (change == "tp-heads") {
            l.model->heads = 60; // 60 heads, 8-way TP
            l.model->kvHeads = 4;
        } else if (change == "batch") {
            l.training.globalBatch = 250;
        } else if (change == "oom") {
            l.cluster.gpu = "A100-SXM-80GB";
            l.parallel.pp = 1;
            l.parallel.dp = 16;
            l.training.recompute = Recompute::None;
            l.training.microBatch = 4;
        } else if (change == "layers") {
            l.model->layers = 78;
        } else if (change == "tp16") {
            l.parallel.tp = 16;
            l.parallel.dp = 2;
        }
        const Evaluation e = run(l);
        QVERIFY2(e.ok, e.error.c_str());
        QVERIFY2(hasWarning(e, code.toStdString()), qPrintable(code));
    }

    void compareTwoPlacements()
    {
        Layout l = example();
        const Evaluation a = run(l);
        l.mapping.resize(128);
        for (int r = 0; r < 128; ++r)
            l.mapping[static_cast<std::size_t>(r)] = r;
        std::swap(l.mapping[4], l.mapping[12]);
        const Evaluation b = run(l);
        const auto changed = mostChangedLinks(a, b, 5);
        QCOMPARE(changed.size(), std::size_t(5));
        // The NICs of the moved GPUs now carry TP traffic: the biggest change is a rise.
        QVERIFY(changed.front().utilizationB > changed.front().utilizationA);
        QCOMPARE(QString::fromStdString(describeChange(10.0, 14.1, "step time")),
                 QStringLiteral("+41% step time"));
        QCOMPARE(QString::fromStdString(describeChange(10.0, 10.0, "step time")),
                 QStringLiteral("no change in step time"));
    }

    void noModelIsNotPriced()
    {
        Layout l;
        l.cluster.nodes = 2;
        const Evaluation e = run(l);
        QVERIFY(!e.ok);
        QVERIFY(QString::fromStdString(e.error).contains(QStringLiteral("no model")));
    }

    void moeAndContextParallel()
    {
        const Layout l = readLayoutFile(RAILYARD_TEST_DATA "/example-moe.railyard.json");
        const Evaluation e = run(l);
        QVERIFY2(e.ok, e.error.c_str());
        QVERIFY(e.exposed.ep > 0); // EP8 all-to-all
        Layout cp = example();
        cp.parallel.cp = 2;
        cp.parallel.dp = 2;
        const Evaluation c = run(cp);
        QVERIFY2(c.ok, c.error.c_str());
        QVERIFY(c.total.cp > 0);
    }

    // A new topology built into the same object (same address, same counts) but with other
    // link rates is priced with its own rates, not the ones of the topology it replaced: both
    // through the overload that makes its own workspace and through one workspace kept across
    // the evaluations (as the document keeps one).
    void reevaluateAfterTuningChange_data()
    {
        QTest::addColumn<bool>("shared");
        QTest::newRow("workspace per evaluation") << false;
        QTest::newRow("one workspace") << true;
    }
    void reevaluateAfterTuningChange()
    {
        QFETCH(bool, shared);
        EvaluationWorkspace workspace;
        const auto price = [&](const Layout &l, const Topology &t) {
            return shared ? evaluate(l, t, workspace) : evaluate(l, t);
        };
        const Layout l = example();
        Layout slow = l;
        slow.cluster.tuning.efficiency = 0.3;
        // Each priced alone, in a workspace of its own.
        const Topology fresh = buildTopology(l.cluster, Catalog::builtin());
        const Evaluation expected = evaluate(l, fresh);
        QVERIFY2(expected.ok, expected.error.c_str());
        const Evaluation slowExpected = evaluate(slow,
                                                 buildTopology(slow.cluster, Catalog::builtin()));
        QVERIFY(slowExpected.stepTimeS > expected.stepTimeS * 1.001); // the tuning matters

        // In turn: normal, slow, normal again in the slow one's place.
        QCOMPARE(price(l, fresh).stepTimeS, expected.stepTimeS);
        Topology t = buildTopology(slow.cluster, Catalog::builtin());
        const Evaluation slowEval = price(slow, t);
        QVERIFY2(slowEval.ok, slowEval.error.c_str());
        QCOMPARE(slowEval.stepTimeS, slowExpected.stepTimeS);
        QCOMPARE(slowEval.links->utilization, slowExpected.links->utilization);
        const std::uint64_t slowBuild = t.buildId();
        t = buildTopology(l.cluster, Catalog::builtin()); // same object, same counts
        QCOMPARE(t.linkCount(), fresh.linkCount());
        QVERIFY(t.buildId() != slowBuild && t.buildId() != fresh.buildId());
        const Evaluation again = price(l, t);
        QVERIFY2(again.ok, again.error.c_str());
        QVERIFY2(std::abs(again.stepTimeS - expected.stepTimeS) <= 1e-12 * expected.stepTimeS,
                 qPrintable(QStringLiteral("%1 s after rebuilding, %2 s fresh")
                                    .arg(again.stepTimeS, 0, 'g', 12)
                                    .arg(expected.stepTimeS, 0, 'g', 12)));
        QVERIFY(again.links && expected.links);
        QCOMPARE(again.links->utilization, expected.links->utilization);
        QCOMPARE(again.links->bytesUp, expected.links->bytesUp);
    }

    // One workspace moved between topologies of different sizes and fabrics gives, each time,
    // exactly what a workspace of its own gives; link loads still held by an earlier
    // evaluation are not overwritten by a later one.
    void workspaceAcrossTopologies()
    {
        Layout bigger = example();
        bigger.cluster.nodes = 32;
        bigger.parallel.dp = 8;
        bigger.training.globalBatch = 512;
        Layout ecmp = example();
        ecmp.cluster.tuning.adaptiveRouting = false;
        const std::vector<Layout> layouts{example(),
                                          readLayoutFile(RAILYARD_TEST_DATA
                                                         "/example-moe.railyard.json"),
                                          bigger,
                                          ecmp,
                                          example()};
        EvaluationWorkspace workspace;
        std::vector<Evaluation> kept;
        for (const Layout &l : layouts) {
            const Topology t = buildTopology(l.cluster, Catalog::builtin());
            const Evaluation own = evaluate(l, t);
            const Evaluation reused = evaluate(l, t, workspace);
            QVERIFY2(own.ok && reused.ok, (own.error + reused.error).c_str());
            QCOMPARE(reused.stepTimeS, own.stepTimeS);
            QCOMPARE(reused.links->bytesUp, own.links->bytesUp);
            QCOMPARE(reused.links->bytesDown, own.links->bytesDown);
            QCOMPARE(reused.links->utilization, own.links->utilization);
            QCOMPARE(reused.links->peakUtilization, own.links->peakUtilization);
            // Again on the same topology, and on a copy of it: the rates read for this build
            // are kept and still right.
            const Topology copy = t;
            QCOMPARE(copy.buildId(), t.buildId());
            const Evaluation again = evaluate(l, copy, workspace);
            QCOMPARE(again.stepTimeS, own.stepTimeS);
            QCOMPARE(again.links->utilization, own.links->utilization);
            kept.push_back(reused);
        }
        // The first and last layouts are the same: their loads are equal but not shared.
        QVERIFY(kept.front().links != kept.back().links);
        QCOMPARE(kept.front().links->utilization, kept.back().links->utilization);
        QVERIFY(kept[2].links->size() > kept[0].links->size()); // 32 servers' links kept whole
    }
};

QTEST_APPLESS_MAIN(TestEvaluate)
#include "tst_evaluate.moc"
