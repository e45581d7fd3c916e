#include "layout/placement.h"

#include <QTest>

#include <numeric>
#include <set>

using namespace railyard::engine;

namespace {

Layout cluster16()
{
    Layout l = readLayoutFile(RAILYARD_TEST_DATA "/example.railyard.json"); // TP8 PP4 DP4
    return l;
}

bool isPermutation(const std::vector<int> &m, int n)
{
    std::vector<int> s = m;
    std::sort(s.begin(), s.end());
    std::vector<int> ref(static_cast<std::size_t>(n));
    std::iota(ref.begin(), ref.end(), 0);
    return s == ref;
}

} // namespace

class TestPlacement : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void placeTpGroupOnAnotherServer()
    {
        const Layout l = cluster16();
        // TP group 0 lives on GPUs 0-7; put it on server 2 (GPUs 16-23).
        std::vector<int> targets(8);
        std::iota(targets.begin(), targets.end(), 16);
        const MappingEdit e = placeGroup(l, Dim::TP, 0, targets);
        QVERIFY2(e.ok(), e.error.c_str());
        QVERIFY(isPermutation(e.mapping, 128));
        for (int r = 0; r < 8; ++r)
            QCOMPARE(e.mapping[static_cast<std::size_t>(r)], 16 + r);
        // The ranks that were on 16-23 (TP group 2) moved to the freed GPUs 0-7.
        for (int r = 16; r < 24; ++r)
            QVERIFY(e.mapping[static_cast<std::size_t>(r)] < 8);
        // Putting the group back restores the identity.
        Layout moved = l;
        moved.mapping = e.mapping;
        std::vector<int> home(8);
        std::iota(home.begin(), home.end(), 0);
        const MappingEdit back = placeGroup(moved, Dim::TP, 0, home);
        QVERIFY(back.ok());
        RankLayout ranks(moved);
        Layout restored = moved;
        restored.mapping = back.mapping;
        const MappingEdit again = placeGroup(restored, Dim::TP, 2, {16, 17, 18, 19, 20, 21, 22, 23});
        QVERIFY(again.ok());
        std::vector<int> identity(128);
        std::iota(identity.begin(), identity.end(), 0);
        QCOMPARE(again.mapping, identity);
    }

    void splitAcrossServers()
    {
        const Layout l = cluster16();
        const MappingEdit e = placeGroup(l, Dim::TP, 0, {0, 1, 2, 3, 8, 9, 10, 11});
        QVERIFY(e.ok());
        QVERIFY(isPermutation(e.mapping, 128));
        Layout moved = l;
        moved.mapping = e.mapping;
        const RankLayout r(moved);
        const std::vector<int> gpus = r.groupGpus(Dim::TP, 0);
        QCOMPARE(std::set<int>(gpus.begin(), gpus.end()), (std::set<int>{0, 1, 2, 3, 8, 9, 10, 11}));
    }

    void refusedEdits_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("reason");
        QTest::newRow("too few targets") << "few"
                                         << "TP group 0 has 8 GPUs; 4 were given";
        QTest::newRow("duplicate target") << "dup"
                                          << "GPU 3 is named twice";
        QTest::newRow("outside the cluster") << "out"
                                             << "GPU 500 is not in the cluster";
        QTest::newRow("no such group") << "group"
                                       << "TP group 99 does not exist";
        QTest::newRow("stage on a server") << "stage"
                                           << "PP stage 1 has 32 GPUs; 8 were given";
        QTest::newRow("swap with itself") << "self"
                                          << "cannot swap with itself";
        QTest::newRow("selection size") << "select"
                                        << "a TP group has 8 GPUs; 3 are selected";
    }
    void refusedEdits()
    {
        QFETCH(QString, kind);
        QFETCH(QString, reason);
        const Layout l = cluster16();
        MappingEdit e;
        if (kind == "few")
            e = placeGroup(l, Dim::TP, 0, {0, 1, 2, 3});
        else if (kind == "dup")
            e = placeGroup(l, Dim::TP, 0, {0, 1, 2, 3, 3, 5, 6, 7});
        else if (kind == "out")
            e = placeGroup(l, Dim::TP, 0, {0, 1, 2, 3, 4, 5, 6, 500});
        else if (kind == "group")
            e = placeGroup(l, Dim::TP, 99, {0, 1, 2, 3, 4, 5, 6, 7});
        else if (kind == "stage")
            e = placeCoordinate(l, Dim::PP, 1, {0, 1, 2, 3, 4, 5, 6, 7});
        else if (kind == "self")
            e = swapGpus(l, 5, 5);
        else if (kind == "select")
            e = makeGroupHere(l, Dim::TP, {0, 9, 17});
        QVERIFY(!e.ok());
        QVERIFY2(QString::fromStdString(e.error).contains(reason), e.error.c_str());
    }

    void placeAStage()
    {
        const Layout l = cluster16(); // order tp-cp-ep-dp-pp: stage 1 is GPUs 32-63
        std::vector<int> targets(32);
        std::iota(targets.begin(), targets.end(), 96); // onto stage 3's GPUs
        const MappingEdit e = placeCoordinate(l, Dim::PP, 1, targets);
        QVERIFY2(e.ok(), e.error.c_str());
        QVERIFY(isPermutation(e.mapping, 128));
        Layout moved = l;
        moved.mapping = e.mapping;
        const RankLayout r(moved);
        for (int rank : r.ranksAt(Dim::PP, 1))
            QVERIFY(r.gpuOfRank(rank) >= 96);
        for (int rank : r.ranksAt(Dim::PP, 3))
            QVERIFY(r.gpuOfRank(rank) >= 32 && r.gpuOfRank(rank) < 64);
    }

    void swapAndMakeGroup()
    {
        const Layout l = cluster16();
        const MappingEdit s = swapGpus(l, 3, 40);
        QVERIFY(s.ok());
        QCOMPARE(s.mapping[3], 40);
        QCOMPARE(s.mapping[40], 3);
        // Make the TP group of GPU 8 (group 1) on GPUs 32-35 and 40-43.
        const MappingEdit m = makeGroupHere(l, Dim::TP, {8, 33, 34, 35, 40, 41, 42, 43});
        QVERIFY2(m.ok(), m.error.c_str());
        Layout moved = l;
        moved.mapping = m.mapping;
        const RankLayout r(moved);
        QCOMPARE(r.groupGpus(Dim::TP, 1), (std::vector<int>{8, 33, 34, 35, 40, 41, 42, 43}));
    }

    void sizeChoicesExplainThemselves()
    {
        const Layout l = cluster16(); // llama3-70b: 64 heads, 8 kv heads, 80 layers, 128 GPUs
        const auto tp = sizeChoices(l, Dim::TP);
        bool sawValid8 = false, sawInvalid128 = false;
        for (const SizeChoice &c : tp) {
            if (c.value == 8)
                sawValid8 = c.valid;
            if (c.value == 128) {
                sawInvalid128 = !c.valid;
                QVERIFY2(QString::fromStdString(c.reason).contains(QStringLiteral("heads"))
                                 || QString::fromStdString(c.reason).contains(
                                         QStringLiteral("GPUs")),
                         c.reason.c_str());
            }
        }
        QVERIFY(sawValid8);
        QVERIFY(sawInvalid128);
        // VP: llama3-70b's 80 layers over PP4 split into 1, 2, 4, 5, 10 or 20 virtual stages.
        std::vector<int> validVp;
        for (const SizeChoice &c : vpChoices(l))
            if (c.valid)
                validVp.push_back(c.value);
        QCOMPARE(validVp, (std::vector<int>{1, 2, 4, 5, 10, 20}));
        for (const SizeChoice &c : sizeChoices(l, Dim::EP))
            if (c.value > 1)
                QVERIFY2(!c.valid && c.reason.find("no experts") != std::string::npos,
                         c.reason.c_str());
    }

    void shardGroupChoicesAreDivisorsOfTheDataRanks()
    {
        Layout l = cluster16(); // TP8 PP4 DP4
        l.parallel.tp = 2;
        l.parallel.cp = 2;
        l.parallel.pp = 2;
        l.parallel.dp = 16; // DP x CP = 32
        const auto values = [](const std::vector<SizeChoice> &cs) {
            std::vector<int> v;
            for (const SizeChoice &c : cs)
                v.push_back(c.valid ? c.value : -c.value);
            return v;
        };
        // 0 (every rank) first, then the divisors below 32, largest first.
        QCOMPARE(values(shardGroupChoices(l)), (std::vector<int>{0, 16, 8, 4, 2, 1}));
        // A file's group of every rank is listed (full sharding); one that divides nothing is
        // listed last, invalid, saying why.
        l.training.optimizer.shardGroup = 32;
        QCOMPARE(values(shardGroupChoices(l)), (std::vector<int>{0, 32, 16, 8, 4, 2, 1}));
        l.training.optimizer.shardGroup = 12;
        const auto odd = shardGroupChoices(l);
        QCOMPARE(values(odd), (std::vector<int>{0, 16, 8, 4, 2, 1, -12}));
        QVERIFY2(odd.back().reason.find("does not divide DP x CP = 32") != std::string::npos,
                 odd.back().reason.c_str());
    }
};

QTEST_APPLESS_MAIN(TestPlacement)
#include "tst_placement.moc"
