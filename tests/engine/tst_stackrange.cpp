#include "layout/layout.h"
#include "step/evaluate.h"
#include "step/stackrange.h"
#include "step/workspace.h"
#include "topology/topology.h"

#include <QTest>

#include <algorithm>
#include <thread>

using namespace railyard::engine;

namespace {

Layout zero3()
{
    return readLayoutFile(RAILYARD_TEST_DATA "/../../layouts/zero3-scaling.railyard.json");
}

int countWarnings(const Evaluation &e, const std::string &code)
{
    return static_cast<int>(std::count_if(e.warnings.begin(),
                                          e.warnings.end(),
                                          [&](const Warning &w) { return w.code == code; }));
}

// Everything the range touches is the same in `a` and `b`.
void compareRanged(const Evaluation &a, const Evaluation &b)
{
    QVERIFY(a.ok && b.ok);
    QCOMPARE(a.stepTimeS, b.stepTimeS);
    QCOMPARE(a.stackRange.stacks, b.stackRange.stacks);
    QCOMPARE(a.stackRange.fastestS, b.stackRange.fastestS);
    QCOMPARE(a.stackRange.slowestS, b.stackRange.slowestS);
    QCOMPARE(a.stackRange.fastest, b.stackRange.fastest);
    QCOMPARE(a.stackRange.slowest, b.stackRange.slowest);
    QCOMPARE(a.stepTimeBand.lowS, b.stepTimeBand.lowS);
    QCOMPARE(a.stepTimeBand.highS, b.stepTimeBand.highS);
    QCOMPARE(a.stepTimeBand.fraction, b.stepTimeBand.fraction);
    QCOMPARE(a.stepTimeBand.basis, b.stepTimeBand.basis);
    QCOMPARE(a.assumptions, b.assumptions);
    QCOMPARE(a.warnings.size(), b.warnings.size());
    for (std::size_t i = 0; i < a.warnings.size(); ++i) {
        QCOMPARE(a.warnings[i].code, b.warnings[i].code);
        QCOMPARE(a.warnings[i].message, b.warnings[i].message);
    }
}

} // namespace

// The stack range priced on its own (as the window does, after showing the evaluation) and
// merged later is the range evaluate() merges at once.
class TestStackRange : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // Priced apart, on another thread with a workspace of its own, then merged: the same
    // evaluation, byte for byte, as evaluate() with the range on.
    void pricedApartThenMergedIsTheSame()
    {
        const Layout l = zero3();
        QVERIFY(l.training.stack.empty());
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        EvaluateOptions on;
        on.stackRange = true;
        const Evaluation whole = evaluate(l, t, on);
        QCOMPARE(whole.stackRange.stacks, 6);
        QCOMPARE(countWarnings(whole, "no-stack"), 1);

        EvaluationWorkspace mine;
        Evaluation e = evaluate(l, t, mine);
        QCOMPARE(e.stackRange.stacks, 0);
        QCOMPARE(countWarnings(e, "no-stack"), 0);
        StackRange range;
        std::thread worker([&] {
            EvaluationWorkspace own;
            range = evaluateStackRange(l, t, own);
        });
        worker.join();
        QCOMPARE(range.stacks, 6);
        mergeStackRange(e, range);
        compareRanged(e, whole);
        // Merged once only.
        mergeStackRange(e, range);
        compareRanged(e, whole);
    }

    // With a GPU out the range prices the re-formed job, as evaluate() does.
    void aGpuOutPricesTheReformedJob()
    {
        Layout l = zero3();
        Fault f;
        f.target = FaultTarget::Device;
        f.device = "GPU 3";
        f.state = FaultState::Down;
        l.cluster.faults.push_back(f);
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        QVERIFY(t.downGpuCount() > 0);
        EvaluateOptions on;
        on.stackRange = true;
        const Evaluation whole = evaluate(l, t, on);
        QVERIFY2(whole.ok, whole.error.c_str());
        QVERIFY(whole.stackRange.stacks > 0);
        Evaluation e = evaluate(l, t);
        EvaluationWorkspace own;
        mergeStackRange(e, evaluateStackRange(l, t, own));
        compareRanged(e, whole);
        // The healthy layout's range is another one (the job lost a replica).
        const Layout healthy = zero3();
        const Topology ht = buildTopology(healthy.cluster, Catalog::builtin());
        EvaluationWorkspace other;
        QVERIFY(evaluateStackRange(healthy, ht, other).slowestS != whole.stackRange.slowestS);
    }

    // Asked to stop: an empty range, which merges to nothing.
    void cancelledIsEmpty()
    {
        const Layout l = zero3();
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        EvaluationWorkspace own;
        int asked = 0;
        const StackRange r = evaluateStackRange(l, t, own, [&] { return ++asked > 2; });
        QCOMPARE(r.stacks, 0);
        QCOMPARE(asked, 3); // once before binding, then before each stack
        const Evaluation plain = evaluate(l, t);
        Evaluation e = plain;
        mergeStackRange(e, r);
        QCOMPARE(e.stepTimeBand.highS, plain.stepTimeBand.highS);
        QCOMPARE(e.warnings.size(), plain.warnings.size());
    }

    // A named stack has no range; neither has a layout the engine cannot price.
    void namedOrBrokenHasNone()
    {
        Layout l = zero3();
        l.training.stack = "megatron-core";
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        EvaluationWorkspace own;
        QCOMPARE(evaluateStackRange(l, t, own).stacks, 0);
        Layout broken = zero3();
        broken.parallel.tp = 3; // does not divide the GPUs
        QCOMPARE(evaluateStackRange(broken, t, own).stacks, 0);
    }
};

QTEST_APPLESS_MAIN(TestStackRange)
#include "tst_stackrange.moc"
