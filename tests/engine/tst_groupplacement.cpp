#include "layout/groupplacement.h"
#include "layout/parallelchoices.h"

#include <QTest>

#include <algorithm>
#include <numeric>

using namespace railyard::engine;

namespace {

// 16 servers of 8 H200s, llama3-70b at TP8 PP4 DP4 VP5, order tp-cp-ep-dp-pp: rank
// r = tp + 8 dp + 32 pp runs on GPU r.
Layout example()
{
    return readLayoutFile(RAILYARD_TEST_DATA "/example.railyard.json");
}

std::vector<int> range(int first, int count)
{
    std::vector<int> v(static_cast<std::size_t>(count));
    std::iota(v.begin(), v.end(), first);
    return v;
}

std::vector<int> sorted(std::vector<int> v)
{
    std::sort(v.begin(), v.end());
    return v;
}

// The layout with a plan's mapping stored.
Layout applied(Layout l, const PlacementPlan &plan)
{
    l.mapping = plan.mapping;
    return l;
}

using Refusal = PlacementPlan::Refusal;

} // namespace

class TestGroupPlacement : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void groupsOfEachKind()
    {
        const Layout l = example();
        const RankLayout ranks(l);
        QCOMPARE(groupCount(ranks, GroupKind::Tp), 16);
        QCOMPARE(groupCount(ranks, GroupKind::PpStage), 4);
        QCOMPARE(groupCount(ranks, GroupKind::DpReplica), 4);
        QCOMPARE(groupGpus(ranks, GroupRef{GroupKind::Tp, 5}), range(40, 8));
        QCOMPARE(groupGpus(ranks, GroupRef{GroupKind::PpStage, 1}), range(32, 32));
        std::vector<int> replica1;
        for (int stage = 0; stage < 4; ++stage)
            for (int g : range(32 * stage + 8, 8))
                replica1.push_back(g);
        QCOMPARE(sorted(groupGpus(ranks, GroupRef{GroupKind::DpReplica, 1})), replica1);
        QCOMPARE(groupOfRank(ranks, GroupKind::DpReplica, 41), 1);
        QCOMPARE(groupOfRank(ranks, GroupKind::PpStage, 41), 1);
        QVERIFY(groupRanks(ranks, GroupRef{GroupKind::Tp, 16}).empty());
        QVERIFY(groupRanks(ranks, GroupRef{GroupKind::PpStage, -1}).empty());
        const auto at = groupAtGpu(ranks, GroupKind::Tp, 43);
        QVERIFY(at);
        QCOMPARE(*at, (GroupRef{GroupKind::Tp, 5}));
        QVERIFY(!groupAtGpu(ranks, GroupKind::Tp, 128));
        QCOMPARE(describeGroup(GroupRef{GroupKind::DpReplica, 2}), std::string("DP replica 2"));
    }

    void jobIdNamesTheSizesAndTheOrder()
    {
        Layout l = example();
        QCOMPARE(jobId(l), std::string("gpus128-tp8-cp1-ep1-etp1-pp4-dp4-tp-cp-ep-dp-pp"));
        Layout other = l;
        other.parallel.order = kNaiveOrder;
        QVERIFY(jobId(other) != jobId(l));
        other = l;
        other.parallel.tp = 4;
        other.parallel.dp = 8;
        QVERIFY(jobId(other) != jobId(l));
        // The mapping is not part of the job: a chip still means the same group after a move.
        other = l;
        other.mapping = range(0, 128);
        std::swap(other.mapping[0], other.mapping[9]);
        QCOMPARE(jobId(other), jobId(l));
    }

    void dropOnAGpuTakesItAndTheOnesAfter()
    {
        const Layout l = example();
        const RankLayout ranks(l);
        const PlacementPlan p = planGroupDrop(l, &ranks, {GroupKind::Tp, 0}, DropSite::gpu(20));
        QVERIFY2(p.ok(), p.error.c_str());
        QVERIFY(!p.noChange);
        QCOMPARE(p.targets, range(20, 8));
        const RankLayout after(applied(l, p));
        QCOMPARE(groupGpus(after, GroupRef{GroupKind::Tp, 0}), range(20, 8));
        // The ranks that were on 20-23 took the GPUs the group left.
        for (int rank = 20; rank < 24; ++rank)
            QVERIFY(after.gpuOfRank(rank) < 8);
    }

    void dropOnAServerOrATrayTakesItsFirstGpus()
    {
        const Layout l = example();
        const RankLayout ranks(l);
        const DropSite server = DropSite::server(2, 8);
        QCOMPARE(server.name(), std::string("server 2"));
        QCOMPARE(server.firstGpu, 16);
        QCOMPARE(server.gpuCount, 8);
        const PlacementPlan p = planGroupDrop(l, &ranks, {GroupKind::Tp, 5}, server);
        QVERIFY2(p.ok(), p.error.c_str());
        QCOMPARE(p.targets, range(16, 8));
        QCOMPARE(groupGpus(RankLayout(applied(l, p)), GroupRef{GroupKind::Tp, 5}), range(16, 8));
        QCOMPARE(DropSite::server(3, 4, true).name(), std::string("tray 3"));
        // A group larger than a server runs on into the servers after it.
        const PlacementPlan stage = planGroupDrop(l, &ranks, {GroupKind::PpStage, 3}, server);
        QVERIFY2(stage.ok(), stage.error.c_str());
        QCOMPARE(stage.targets, range(16, 32));
    }

    void dropOnARackMovesAPipelineStage()
    {
        const Layout l = example();
        const RankLayout ranks(l);
        const DropSite rack = DropSite::rack(3, 12, 16, 8); // servers 12-15: GPUs 96-127
        QCOMPARE(rack.firstGpu, 96);
        QCOMPARE(rack.gpuCount, 32);
        const PlacementPlan p = planGroupDrop(l, &ranks, {GroupKind::PpStage, 1}, rack);
        QVERIFY2(p.ok(), p.error.c_str());
        QCOMPARE(p.targets, range(96, 32));
        const RankLayout after(applied(l, p));
        QCOMPARE(groupGpus(after, GroupRef{GroupKind::PpStage, 1}), range(96, 32));
        // Stage 3 swapped into the GPUs stage 1 left.
        QCOMPARE(groupGpus(after, GroupRef{GroupKind::PpStage, 3}), range(32, 32));
    }

    void dropADpReplica()
    {
        const Layout l = example();
        const RankLayout ranks(l);
        const PlacementPlan p = planGroupDrop(l,
                                              &ranks,
                                              {GroupKind::DpReplica, 1},
                                              DropSite::gpu(0));
        QVERIFY2(p.ok(), p.error.c_str());
        QCOMPARE(p.targets, range(0, 32));
        const RankLayout after(applied(l, p));
        // The replica's ranks, in rank order, take GPUs 0-31: one copy of the model per
        // four servers.
        QCOMPARE(groupGpus(after, GroupRef{GroupKind::DpReplica, 1}), range(0, 32));
        std::vector<int> all;
        for (int d = 0; d < 4; ++d)
            for (int g : groupGpus(after, GroupRef{GroupKind::DpReplica, d}))
                all.push_back(g);
        QCOMPARE(sorted(all), range(0, 128));
    }

    void theMappingToStoreIsNormalized()
    {
        const Layout l = example();
        const RankLayout ranks(l);
        // Where the group already is: works, changes nothing, stores nothing.
        const PlacementPlan home = planGroupDrop(l, &ranks, {GroupKind::Tp, 2}, DropSite::gpu(16));
        QVERIFY(home.ok());
        QVERIFY(home.noChange);
        QVERIFY(home.mapping.empty());
        // Away and back: the layout's mapping is empty again (the order alone gives it).
        const PlacementPlan away = planGroupDrop(l, &ranks, {GroupKind::Tp, 2}, DropSite::gpu(48));
        QVERIFY(away.ok());
        QCOMPARE(away.mapping.size(), std::size_t(128));
        const Layout moved = applied(l, away);
        const RankLayout movedRanks(moved);
        const PlacementPlan back = planGroupDrop(moved,
                                                 &movedRanks,
                                                 {GroupKind::Tp, 2},
                                                 DropSite::gpu(16));
        QVERIFY2(back.ok(), back.error.c_str());
        QVERIFY(!back.noChange);
        QVERIFY(back.mapping.empty());
        QCOMPARE(normalizedMapping(range(0, 4)), std::vector<int>{});
        QCOMPARE(normalizedMapping({1, 0}), (std::vector<int>{1, 0}));
    }

    void refusedDropsSayWhy_data()
    {
        QTest::addColumn<int>("row");
        QTest::addColumn<int>("refusal");
        QTest::addColumn<QString>("reason");
        QTest::newRow("past the last GPU")
                << 0 << int(Refusal::DoesNotFit)
                << "TP group 2 needs 8 GPUs from GPU 124, but the cluster ends at GPU 127";
        QTest::newRow("a stage past the last server")
                << 1 << int(Refusal::DoesNotFit)
                << "PP stage 0 needs 32 GPUs from GPU 112 (server 14), but the cluster ends at "
                   "GPU 127";
        QTest::newRow("no such group")
                << 2 << int(Refusal::NoSuchGroup) << "TP group 16 does not exist in this job";
        QTest::newRow("no ranks") << 3 << int(Refusal::NoRanks)
                                  << "the parallel sizes do not fill the cluster";
        QTest::newRow("on the background")
                << 4 << int(Refusal::NoSite) << "drop TP group 1 on a GPU, a server or a rack";
        QTest::newRow("outside the cluster")
                << 5 << int(Refusal::DoesNotFit) << "server 16 is not in the cluster";
    }

    void refusedDropsSayWhy()
    {
        QFETCH(int, row);
        QFETCH(int, refusal);
        QFETCH(QString, reason);
        const Layout l = example();
        const RankLayout ranks(l);
        PlacementPlan p;
        switch (row) {
        case 0: p = planGroupDrop(l, &ranks, {GroupKind::Tp, 2}, DropSite::gpu(124)); break;
        case 1:
            p = planGroupDrop(l, &ranks, {GroupKind::PpStage, 0}, DropSite::server(14, 8));
            break;
        case 2: p = planGroupDrop(l, &ranks, {GroupKind::Tp, 16}, DropSite::gpu(0)); break;
        case 3: p = planGroupDrop(l, nullptr, {GroupKind::Tp, 1}, DropSite::gpu(0)); break;
        case 4: p = planGroupDrop(l, &ranks, {GroupKind::Tp, 1}, std::nullopt); break;
        case 5: p = planGroupDrop(l, &ranks, {GroupKind::Tp, 1}, DropSite::server(16, 8)); break;
        }
        QVERIFY(!p.ok());
        QCOMPARE(int(p.refusal), refusal);
        QVERIFY2(QString::fromStdString(p.error).contains(reason), p.error.c_str());
        QVERIFY(p.mapping.empty());
        if (row == 0)
            QCOMPARE(p.targets, range(124, 4)); // the GPUs it would run over
        if (row == 1)
            QCOMPARE(p.targets, range(112, 16));
    }

    void swapAndMakeGroupPlans()
    {
        const Layout l = example();
        const RankLayout ranks(l);
        const PlacementPlan swap = planGpuSwap(l, 3, 40);
        QVERIFY(swap.ok());
        QCOMPARE(swap.mapping[3], 40);
        QCOMPARE(swap.mapping[40], 3);
        QCOMPARE(swap.targets, (std::vector<int>{3, 40}));
        const PlacementPlan self = planGpuSwap(l, 5, 5);
        QCOMPARE(self.refusal, Refusal::Refused);
        QVERIFY(self.error.find("cannot swap with itself") != std::string::npos);
        // The PP stage of GPU 40 (stage 1) onto GPUs 0-31.
        const PlacementPlan stage = planMakeGroup(l, &ranks, GroupKind::PpStage, range(0, 32));
        QVERIFY(stage.ok());
        std::vector<int> first = range(0, 32);
        first.front() = 40;
        const PlacementPlan fromForty = planMakeGroup(l, &ranks, GroupKind::PpStage, first);
        QVERIFY2(fromForty.ok(), fromForty.error.c_str());
        QCOMPARE(sorted(groupGpus(RankLayout(applied(l, fromForty)),
                                  GroupRef{GroupKind::PpStage, 1})),
                 sorted(first));
        const PlacementPlan few = planMakeGroup(l, &ranks, GroupKind::Tp, {0, 9, 17});
        QCOMPARE(few.refusal, Refusal::Refused);
        QVERIFY2(few.error.find("a TP group has 8 GPUs; 3 are selected") != std::string::npos,
                 few.error.c_str());
        QCOMPARE(planMakeGroup(l, &ranks, GroupKind::Tp, {}).error,
                 std::string("select the GPUs first"));
        Layout broken = l;
        broken.parallel.tp = 3;
        const PlacementPlan none = planMakeGroup(broken, nullptr, GroupKind::Tp, {0, 1, 2});
        QCOMPARE(none.refusal, Refusal::NoRanks);
        QVERIFY2(none.error.find("TP x CP x PP x DP") != std::string::npos, none.error.c_str());
    }

    void dpFollowsFromTheGpuCount()
    {
        const Layout l = example(); // 128 GPUs, TP8 PP4 DP4 (DP written in the file)
        ParallelConfig p = withParallelSize(l.parallel, 128, Dim::TP, 4);
        QCOMPARE(p.tp, 4);
        QCOMPARE(p.dp, std::optional<int>(8));
        p = withParallelSize(l.parallel, 128, Dim::PP, 8);
        QCOMPARE(p.dp, std::optional<int>(2));
        p = withParallelSize(l.parallel, 128, Dim::CP, 2);
        QCOMPARE(p.dp, std::optional<int>(2));
        // Sizes that do not divide the GPUs leave DP as it was (the check then says why).
        p = withParallelSize(l.parallel, 128, Dim::TP, 3);
        QCOMPARE(p.dp, std::optional<int>(4));
        // An absent DP already follows the GPU count.
        ParallelConfig absent = l.parallel;
        absent.dp.reset();
        QVERIFY(!withParallelSize(absent, 128, Dim::TP, 4).dp);
        // Setting DP or EP changes that size only.
        p = withParallelSize(l.parallel, 128, Dim::DP, 2);
        QCOMPARE(p.dp, std::optional<int>(2));
        QCOMPARE(p.tp, 8);
        p = withParallelSize(l.parallel, 128, Dim::EP, 2);
        QCOMPARE(p.ep, 2);
        QCOMPARE(p.dp, std::optional<int>(4));
    }

    void vpNeedsAPipeline()
    {
        const Layout l = example(); // PP4 VP5
        QCOMPARE(l.parallel.vp, 5);
        ParallelConfig p = withParallelSize(l.parallel, 128, Dim::PP, 1);
        QCOMPARE(p.pp, 1);
        QCOMPARE(p.vp, 1);
        QCOMPARE(p.dp, std::optional<int>(16));
        // With a pipeline left, VP stays.
        QCOMPARE(withParallelSize(l.parallel, 128, Dim::PP, 2).vp, 5);
        QCOMPARE(withParallelSize(l.parallel, 128, Dim::TP, 4).vp, 5);
        // The choices say the same: without PP only VP 1 is valid.
        Layout flat = l;
        flat.parallel = p;
        for (const SizeChoice &c : vpChoices(flat)) {
            QCOMPARE(c.valid, c.value == 1);
            if (!c.valid)
                QVERIFY2(c.reason.find("needs pipeline parallelism") != std::string::npos,
                         c.reason.c_str());
        }
    }
};

QTEST_APPLESS_MAIN(TestGroupPlacement)
#include "tst_groupplacement.moc"
