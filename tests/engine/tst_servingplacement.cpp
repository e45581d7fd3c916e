// The serving engine's placement by hand (serving/servingplacement.h), without the canvas: the
// groups' names and GPUs, the drops it refuses and why, and what a drop does to the price.

#include "layout/catalog.h"
#include "layout/layout.h"
#include "serving/servingevaluate.h"
#include "serving/servinggroups.h"
#include "serving/servingplacement.h"
#include "topology/topology.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <string>

using namespace railyard::engine;

namespace {

using K = ServingGpuGroups::Kind;
using Refusal = PlacementPlan::Refusal;

// 18 GB200 trays of 4 in one NVL72: a prefill pool of 11 TP4 replicas (GPUs 0-43) and a decode
// pool of 7 (GPUs 44-71).
constexpr const char *kDisaggNvl72 = "serving-disaggregated-gb200-nvl72.railyard.json";
// Two H100 servers of 8, Llama 3.1 70B at TP8 with 2 replicas, one per server.
constexpr const char *kLlamaTp8 = "serving-llama70b-tp8-h100.railyard.json";

Layout shipped(const char *name)
{
    return readLayoutFile(std::string(RAILYARD_SOURCE_DIR "/layouts/") + name);
}

ServingGpuGroups groupsOf(const Layout &l)
{
    return servingGpuGroups(l, l.cluster.gpuCount());
}

std::vector<int> range(int first, int count)
{
    std::vector<int> v(static_cast<std::size_t>(count));
    std::iota(v.begin(), v.end(), first);
    return v;
}

bool contains(const std::string &text, const std::string &part)
{
    return text.find(part) != std::string::npos;
}

// The layout with a plan's mapping stored.
Layout applied(Layout l, const PlacementPlan &plan)
{
    l.mapping = plan.mapping;
    return l;
}

ServingEvaluation priced(const Layout &l)
{
    ServingOptions options;
    options.linkLoads = false;
    options.timeline = false;
    return evaluateServing(l, buildTopology(l.cluster, Catalog::builtin()), options);
}

} // namespace

class TestServingPlacement : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // A group is named as the serving engine places it: TP groups by replica and pool, numbered
    // through the prefill pool, then the decode pool; an aggregated layout has no pool suffix.
    void namesFollowThePools()
    {
        const Layout l = shipped(kDisaggNvl72);
        const ServingGpuGroups g = groupsOf(l);
        QVERIFY2(g.ok(), g.error.c_str());
        QVERIFY(g.disaggregated);
        QCOMPARE(g.count[K::Tp], 18);
        QCOMPARE(g.count[K::Replica], 18);
        QCOMPARE(g.count[K::Pool], 2);
        QCOMPARE(describeServingGroup(g, K::Tp, 0),
                 std::string("TP group 0 of replica 0 (prefill pool)"));
        QCOMPARE(describeServingGroup(g, K::Tp, 17),
                 std::string("TP group 17 of replica 17 (decode pool)"));
        QCOMPARE(describeServingGroup(g, K::Replica, 11), std::string("replica 11 (decode pool)"));
        QCOMPARE(describeServingGroup(g, K::Pool, 0), std::string("prefill pool"));
        QCOMPARE(describeServingGroup(g, K::Pool, 1), std::string("decode pool"));
        // Ranks in order (TP fastest) and the GPUs they run on.
        QCOMPARE(servingGroupGpus(g, K::Tp, 17), range(68, 4));
        QCOMPARE(servingGroupGpus(g, K::Tp, 11), range(44, 4));
        QCOMPARE(servingGroupRanks(g, K::Pool, 1).size(), std::size_t(28));
        QCOMPARE(servingGroupGpus(g, K::Pool, 1), range(44, 28));
        // No such group: nothing.
        QVERIFY(servingGroupRanks(g, K::Tp, 18).empty());
        QVERIFY(servingGroupRanks(g, K::Tp, -1).empty());

        const Layout agg = shipped(kLlamaTp8);
        const ServingGpuGroups a = groupsOf(agg);
        QVERIFY2(a.ok(), a.error.c_str());
        QVERIFY(!a.disaggregated);
        QCOMPARE(a.count[K::Tp], 2);
        QCOMPARE(describeServingGroup(a, K::Tp, 1), std::string("TP group 1 of replica 1"));
        QCOMPARE(describeServingGroup(a, K::Replica, 0), std::string("replica 0"));
        QCOMPARE(describeServingGroup(a, K::Pool, 0), std::string("serving pool"));
        QCOMPARE(servingGroupGpus(a, K::Tp, 1), range(8, 8));
    }

    // Each refusal says what is wrong, naming the group, and takes no mapping.
    void refusalsNameTheGroup()
    {
        const Layout l = shipped(kDisaggNvl72);
        const ServingGpuGroups g = groupsOf(l);
        QVERIFY2(g.ok(), g.error.c_str());

        // Past the cluster's end: the GPUs it would run over are marked.
        PlacementPlan p = planServingGroupDrop(l, g, K::Replica, 3, DropSite::gpu(70));
        QCOMPARE(p.refusal, Refusal::DoesNotFit);
        QVERIFY2(contains(p.error, "replica 3 (prefill pool) needs 4 GPUs from GPU 70"),
                 p.error.c_str());
        QVERIFY2(contains(p.error, "the cluster ends at GPU 71"), p.error.c_str());
        QCOMPARE(p.targets, range(70, 2));
        QVERIFY(p.mapping.empty());

        // A site outside the cluster.
        p = planServingGroupDrop(l, g, K::Tp, 0, DropSite::gpu(72));
        QCOMPARE(p.refusal, Refusal::DoesNotFit);
        QVERIFY2(contains(p.error, "GPU 72 is not in the cluster"), p.error.c_str());

        // Dropped on the background.
        p = planServingGroupDrop(l, g, K::Tp, 17, std::nullopt);
        QCOMPARE(p.refusal, Refusal::NoSite);
        QCOMPARE(p.error,
                 std::string("drop TP group 17 of replica 17 (decode pool) on a GPU, a server or a "
                             "rack"));

        // Groups the deployment does not have.
        p = planServingGroupDrop(l, g, K::Tp, 18, DropSite::gpu(0));
        QCOMPARE(p.refusal, Refusal::NoSuchGroup);
        QVERIFY2(p.error == "TP group 18 does not exist in this deployment", p.error.c_str());
        p = planServingGroupDrop(l, g, K::Pool, 2, DropSite::gpu(0));
        QCOMPARE(p.refusal, Refusal::NoSuchGroup);
        QCOMPARE(p.error, std::string("pool 2 does not exist in this deployment"));

        // Pools that cannot be placed (the cluster is too small for them): said, never read.
        const ServingGpuGroups small = servingGpuGroups(l, 64);
        QVERIFY(!small.ok());
        p = planServingGroupDrop(l, small, K::Tp, 0, DropSite::gpu(0));
        QCOMPARE(p.refusal, Refusal::NoRanks);
        QVERIFY2(contains(p.error, "the serving pools cannot be placed: " + small.error),
                 p.error.c_str());
        p = planServingGpuSwap(l, small, 0, 1);
        QCOMPARE(p.refusal, Refusal::NoRanks);

        // A mapping that names a GPU for two ranks is refused, not read past its end.
        Layout twice = l;
        twice.mapping = range(0, 72);
        twice.mapping[5] = 0; // five ranks on GPUs 0-3, four GPUs freed
        p = planServingGroupDrop(twice, g, K::Tp, 17, DropSite::gpu(0));
        QCOMPARE(p.refusal, Refusal::Refused);
        QVERIFY2(contains(p.error, "names GPU 0 for more than one rank"), p.error.c_str());

        // A swap with a GPU the cluster does not have.
        p = planServingGpuSwap(l, g, 3, 99);
        QCOMPARE(p.refusal, Refusal::DoesNotFit);
        QCOMPARE(p.error, std::string("GPU 99 is not in the cluster"));
    }

    // A drop moves the group whole and the ranks it displaces to the GPUs it left; dropped back
    // it leaves the layout as it was (no mapping stored).
    void dropMovesTheGroupAndBack()
    {
        const Layout l = shipped(kDisaggNvl72);
        const ServingGpuGroups g = groupsOf(l);
        // The decode pool's last TP group onto the first server.
        const PlacementPlan p = planServingGroupDrop(l, g, K::Tp, 17, DropSite::server(0, 4, true));
        QVERIFY2(p.ok(), p.error.c_str());
        QVERIFY(!p.noChange);
        QCOMPARE(p.targets, range(0, 4));
        QCOMPARE(p.mapping.size(), std::size_t(72));
        std::vector<int> sorted = p.mapping;
        std::sort(sorted.begin(), sorted.end());
        QCOMPARE(sorted, range(0, 72)); // every GPU once
        const Layout moved = applied(l, p);
        const ServingGpuGroups after = groupsOf(moved);
        QVERIFY2(after.ok(), after.error.c_str());
        QCOMPARE(servingGroupGpus(after, K::Tp, 17), range(0, 4));
        QCOMPARE(servingGroupGpus(after, K::Tp, 0), range(68, 4)); // prefill TP group 0, displaced
        QCOMPARE(describeServingGroup(after, K::Tp, 17),
                 std::string("TP group 17 of replica 17 (decode pool)"));
        QCOMPARE(after.group[K::Pool][0], 1);

        // Dropped where it is: no change.
        const PlacementPlan same = planServingGroupDrop(moved, after, K::Tp, 17, DropSite::gpu(0));
        QVERIFY(same.ok());
        QVERIFY(same.noChange);
        // Back: the mapping normalizes away.
        const PlacementPlan back = planServingGroupDrop(moved, after, K::Tp, 17, DropSite::gpu(68));
        QVERIFY2(back.ok(), back.error.c_str());
        QVERIFY(!back.noChange);
        const Layout restored = applied(moved, back);
        QCOMPARE(servingGroupGpus(groupsOf(restored), K::Tp, 0), range(0, 4));
        QCOMPARE(servingGroupGpus(groupsOf(restored), K::Tp, 17), range(68, 4));
    }

    // "Make a TP group here" on a serving layout: the TP group the first selected GPU serves (a
    // replica's, in its pool) moves onto the selection, named as the engine places it.
    void makeGroupMovesTheServingGroup()
    {
        const Layout l = shipped(kDisaggNvl72);
        const ServingGpuGroups g = groupsOf(l);
        QCOMPARE(servingGroupAtGpu(g, K::Tp, 46), std::optional<int>(11));
        QCOMPARE(servingGroupAtGpu(g, K::Pool, 46), std::optional<int>(1));
        QCOMPARE(servingGroupAtGpu(g, K::Tp, 72), std::nullopt);

        const PlacementPlan p = planServingMakeGroup(l, g, K::Tp, range(46, 4));
        QVERIFY2(p.ok(), p.error.c_str());
        QCOMPARE(p.targets, range(46, 4));
        const Layout moved = applied(l, p);
        const ServingGpuGroups after = groupsOf(moved);
        QCOMPARE(servingGroupGpus(after, K::Tp, 11), range(46, 4));
        std::vector<int> next = servingGroupGpus(after, K::Tp, 12); // displaced onto 44, 45
        std::sort(next.begin(), next.end());
        QCOMPARE(next, (std::vector<int>{44, 45, 50, 51}));
        // Every GPU keeps its pool: the decode ranks stayed in the decode pool's GPUs.
        QCOMPARE(after.group[K::Pool], g.group[K::Pool]);
        // Where it already is: no change.
        QVERIFY(planServingMakeGroup(l, g, K::Tp, range(44, 4)).noChange);

        // Refusals name the group and the count.
        PlacementPlan r = planServingMakeGroup(l, g, K::Tp, range(46, 3));
        QCOMPARE(r.refusal, Refusal::Refused);
        QCOMPARE(r.error,
                 std::string("TP group 11 of replica 11 (decode pool) has 4 GPUs; 3 are selected"));
        r = planServingMakeGroup(l, g, K::Tp, {});
        QCOMPARE(r.error, std::string("select the GPUs first"));
        r = planServingMakeGroup(l, g, K::Tp, {46, 47, 47, 48});
        QCOMPARE(r.error, std::string("GPU 47 is selected twice"));
        r = planServingMakeGroup(l, g, K::Tp, {70, 71, 72, 73});
        QCOMPARE(r.refusal, Refusal::DoesNotFit);
        QCOMPARE(r.error, std::string("GPU 72 is not in the cluster"));
        // A dense model's EP groups are one GPU each.
        r = planServingMakeGroup(l, g, K::Ep, range(46, 4));
        QCOMPARE(r.refusal, Refusal::Refused);
        QVERIFY2(r.error == "EP group 46 (decode pool) has 1 GPU; 4 are selected", r.error.c_str());
        // An idle GPU serves no group.
        Layout small = l;
        small.serving->disaggregated->decode.replicas = 6; // GPUs 68-71 idle
        const ServingGpuGroups idle = groupsOf(small);
        QVERIFY2(idle.ok(), idle.error.c_str());
        r = planServingMakeGroup(small, idle, K::Tp, range(68, 4));
        QVERIFY2(r.error == "GPU 68 serves no rank", r.error.c_str());
    }

    // Llama 3.1 70B at TP8, one replica per H100 server: TP group 0 dropped on GPU 4 takes GPUs
    // 4-11 and pushes replica 1's ranks onto GPUs 0-3, so both TP groups cross the two servers.
    // The decode step's TP all-reduces then go over the NICs (latency-bound small messages, one
    // per layer half): that part of TPOT rises, the weights read from HBM do not change, and
    // TPOT rises with it.
    void dropAcrossServersRaisesTpot()
    {
        const Layout l = shipped(kLlamaTp8);
        const ServingGpuGroups g = groupsOf(l);
        const PlacementPlan p = planServingGroupDrop(l, g, K::Tp, 0, DropSite::gpu(4));
        QVERIFY2(p.ok(), p.error.c_str());
        QCOMPARE(p.targets, range(4, 8));
        const Layout moved = applied(l, p);
        const ServingGpuGroups after = groupsOf(moved);
        QCOMPARE(servingGroupGpus(after, K::Tp, 0), range(4, 8));
        std::vector<int> replica1 = servingGroupGpus(after, K::Tp, 1);
        std::sort(replica1.begin(), replica1.end());
        QCOMPARE(replica1, (std::vector<int>{0, 1, 2, 3, 12, 13, 14, 15}));

        const ServingEvaluation before = priced(l);
        const ServingEvaluation across = priced(moved);
        QVERIFY2(before.ok, before.error.c_str());
        QVERIFY2(across.ok, across.error.c_str());
        QVERIFY(std::abs(across.decode.weightsRead / before.decode.weightsRead - 1) < 1e-5);
        // Measured: TP all-reduce per decode step 2.31 -> 7.33 ms, TPOT 12.97 -> 18.40 ms.
        QVERIFY2(across.decode.tp > 2 * before.decode.tp,
                 qPrintable(QStringLiteral("TP all-reduce per decode step %1 -> %2 s")
                                    .arg(before.decode.tp)
                                    .arg(across.decode.tp)));
        QVERIFY2(across.tpotS - before.tpotS >= 0.99 * (across.decode.tp - before.decode.tp),
                 qPrintable(QStringLiteral("TPOT %1 -> %2 s").arg(before.tpotS).arg(across.tpotS)));

        // Dropped back onto GPU 0, the layout is the shipped one again: the same price.
        const PlacementPlan back = planServingGroupDrop(moved, after, K::Tp, 0, DropSite::gpu(0));
        QVERIFY2(back.ok(), back.error.c_str());
        const Layout restored = applied(moved, back);
        QVERIFY(restored.mapping.empty());
        QCOMPARE(priced(restored).tpotS, before.tpotS);
    }
};

QTEST_MAIN(TestServingPlacement)
#include "tst_servingplacement.moc"
