#include "base/inputerror.h"
#include "base/units.h"
#include "layout/layout.h"
#include "lesson/collectivelesson.h"
#include "topology/topology.h"

#include <QTest>

#include "comparenear.h"
#include <algorithm>
#include <map>
#include <numeric>

using namespace railyard::engine;

namespace {

Topology load(const std::string &path)
{
    return buildTopology(readLayoutFile(std::string(RAILYARD_TEST_DATA "/") + path).cluster,
                         Catalog::builtin());
}

const Topology &gmi()
{
    static const Topology t = load("gmi-h200-cluster.railyard.json");
    return t;
}

CollectiveRequest request(CollectiveOp op, double bytes, const std::string &gpus, Algorithm a)
{
    CollectiveRequest r;
    r.op = op;
    r.bytes = bytes;
    r.gpus = parseIndexList(gpus, 1 << 20);
    r.algorithm = a;
    return r;
}

constexpr double GiB = 1024.0 * 1024.0 * 1024.0;

} // namespace

class TestCollectiveLesson : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // Ring all-reduce on one 8-GPU server: 2(n-1) = 14 steps, each GPU sending S/8 to its
    // neighbour over its own NVLinks and nothing else.
    void ringOnOneServer()
    {
        const Topology &t = gmi();
        const double S = GiB;
        const CollectiveLesson L = buildCollectiveLesson(t,
                                                         request(CollectiveOp::AllReduce,
                                                                 S,
                                                                 "0-7",
                                                                 Algorithm::Ring));
        QCOMPARE(L.algorithm, Algorithm::Ring);
        QCOMPARE(int(L.steps.size()), 14);
        QCOMPARE(L.chunks, 8);
        std::vector<int> expected;
        for (int g = 0; g < 8; ++g)
            for (int l : t.gpuNvlinks(g))
                expected.push_back(l);
        std::sort(expected.begin(), expected.end());
        for (int s = 0; s < 14; ++s) {
            const LessonStep &st = L.steps[static_cast<std::size_t>(s)];
            QCOMPARE(int(st.transfers.size()), 8);
            QCOMPARE(st.network, false);
            QVERIFY2(st.text.rfind("Step " + std::to_string(s + 1) + " of 14 - ", 0) == 0,
                     st.text.c_str());
            QCOMPARE(QString::fromStdString(st.phase),
                     s < 7 ? QStringLiteral("reduce-scatter") : QStringLiteral("all-gather"));
            std::vector<int> senders;
            for (const LessonTransfer &tr : st.transfers) {
                QCOMPARE(tr.bytes, S / 8);
                QCOMPARE(tr.reduce, s < 7);
                QCOMPARE(tr.toRank, (tr.fromRank + 1) % 8);
                senders.push_back(tr.fromRank);
            }
            std::sort(senders.begin(), senders.end());
            QCOMPARE(senders, std::vector<int>({0, 1, 2, 3, 4, 5, 6, 7}));
            // The links lit: exactly the eight GPUs' NVLinks; per GPU S/8 out and S/8 in.
            const auto &links = L.stepLinks(s);
            std::vector<int> ids;
            std::map<int, double> out, in;
            for (const LinkBytes &lb : links) {
                ids.push_back(lb.link);
                const int gpu = t.devices()[static_cast<std::size_t>(
                                                    t.links()[static_cast<std::size_t>(lb.link)].a)]
                                        .index;
                out[gpu] += lb.up;
                in[gpu] += lb.down;
            }
            QCOMPARE(ids, expected);
            for (int g = 0; g < 8; ++g) {
                QVERIFY(std::abs(out[g] - S / 8) < 1e-5 * S);
                QVERIFY(std::abs(in[g] - S / 8) < 1e-5 * S);
            }
        }
        // A ring needs no pipelining to explain: its steps alone (each its busiest link's bytes
        // over its rate) add up to the estimate's bandwidth time (Simple protocol, no factor).
        QCOMPARE(L.protocol, Protocol::Simple);
        RAILYARD_COMPARE_NEAR(L.stepsAloneS, L.bandwidthS, 1e-3);
        // Equal steps: each is a 14th of the bandwidth time.
        for (const LessonStep &st : L.steps)
            QVERIFY(std::abs(st.timeS - L.bandwidthS / 14) < 1e-9 * L.bandwidthS);
        QVERIFY(!L.formula.empty());
        QVERIFY(L.formula[1].find("2(n-1)/n x S / B_NVLink = 2x7/8 x 1 GiB") != std::string::npos);
    }

    // The steps' bytes, summed over the collective, are the estimate's bytes on every link.
    void bytesMatchTheTrafficModel_data()
    {
        QTest::addColumn<int>("op");
        QTest::addColumn<QString>("gpus");
        QTest::addColumn<int>("algorithm");
        QTest::newRow("ring 1 server")
                << int(CollectiveOp::AllReduce) << "0-7" << int(Algorithm::Ring);
        QTest::newRow("ring 2 servers")
                << int(CollectiveOp::AllReduce) << "0-15" << int(Algorithm::Ring);
        QTest::newRow("all-gather ring 2 servers")
                << int(CollectiveOp::AllGather) << "0-15" << int(Algorithm::Ring);
        QTest::newRow("reduce-scatter ring")
                << int(CollectiveOp::ReduceScatter) << "0-7" << int(Algorithm::Ring);
        QTest::newRow("hierarchical 2 servers")
                << int(CollectiveOp::AllReduce) << "0-15" << int(Algorithm::Hierarchical);
        QTest::newRow("hierarchical all-gather 4 servers")
                << int(CollectiveOp::AllGather) << "0-31" << int(Algorithm::Hierarchical);
        QTest::newRow("tree 4 servers")
                << int(CollectiveOp::AllReduce) << "0-31" << int(Algorithm::Tree);
        QTest::newRow("tree 5 servers")
                << int(CollectiveOp::AllReduce) << "0-39" << int(Algorithm::Tree);
        QTest::newRow("nvls 1 server")
                << int(CollectiveOp::AllReduce) << "0-7" << int(Algorithm::Nvls);
        QTest::newRow("nvls-tree 2 servers")
                << int(CollectiveOp::AllReduce) << "0-15" << int(Algorithm::Nvls);
        QTest::newRow("GPU 3 of two servers")
                << int(CollectiveOp::AllReduce) << "3,11" << int(Algorithm::Auto);
    }
    void bytesMatchTheTrafficModel()
    {
        QFETCH(int, op);
        QFETCH(QString, gpus);
        QFETCH(int, algorithm);
        CollectiveRequest req = request(CollectiveOp(op),
                                        3 * GiB,
                                        gpus.toStdString(),
                                        Algorithm(algorithm));
        const CollectiveLesson L = buildCollectiveLesson(gmi(), req);
        req.wantLinks = true;
        const CollectiveResult r = estimateCollective(gmi(), req);
        QCOMPARE(L.algorithm, r.algorithm);
        std::map<int, std::pair<double, double>> sum;
        for (int s = 0; s < int(L.steps.size()); ++s)
            for (const LinkBytes &lb : L.stepLinks(s)) {
                sum[lb.link].first += lb.up;
                sum[lb.link].second += lb.down;
            }
        std::map<int, std::pair<double, double>> model;
        for (const LinkBytes &lb : r.links)
            if (lb.up != 0 || lb.down != 0)
                model[lb.link] = {lb.up, lb.down};
        QCOMPARE(sum.size(), model.size());
        for (const auto &[link, bytes] : model) {
            QVERIFY2(sum.count(link), gmi().linkName(link).c_str());
            const auto &got = sum[link];
            const double tol = 1e-4 * std::max(bytes.first, bytes.second) + 1;
            RAILYARD_COMPARE_ABS(got.first, bytes.first, tol);
            RAILYARD_COMPARE_ABS(got.second, bytes.second, tol);
        }
    }

    // The steps' durations plus the latency are the estimate's time.
    void timeMatchesTheEstimate_data()
    {
        QTest::addColumn<QString>("layout");
        QTest::addColumn<QString>("gpus");
        QTest::addColumn<int>("algorithm");
        QTest::addColumn<double>("bytes");
        const QString g = QStringLiteral("gmi-h200-cluster.railyard.json");
        QTest::newRow("ring") << g << "0-7" << int(Algorithm::Ring) << GiB;
        QTest::newRow("ring 16 servers") << g << "0-127" << int(Algorithm::Ring) << 4 * GiB;
        QTest::newRow("ring small (LL)") << g << "0-7" << int(Algorithm::Ring) << 4096.0;
        QTest::newRow("tree") << g << "0-31" << int(Algorithm::Tree) << GiB;
        QTest::newRow("tree 16 servers") << g << "0-127" << int(Algorithm::Tree) << 16 * GiB;
        QTest::newRow("hierarchical") << g << "0-15" << int(Algorithm::Hierarchical) << GiB;
        QTest::newRow("nvls") << g << "0-7" << int(Algorithm::Nvls) << GiB;
        QTest::newRow("nvls-tree") << g << "0-31" << int(Algorithm::Nvls) << GiB;
        QTest::newRow("auto 2 servers") << g << "0-15" << int(Algorithm::Auto) << GiB;
        QTest::newRow("sharp") << "collectives/h100-ib-sharp-8node.railyard.json"
                               << "0-63" << int(Algorithm::Sharp) << GiB;
    }
    void timeMatchesTheEstimate()
    {
        QFETCH(QString, layout);
        QFETCH(QString, gpus);
        QFETCH(int, algorithm);
        QFETCH(double, bytes);
        const Topology t = load(layout.toStdString());
        const CollectiveRequest req = request(CollectiveOp::AllReduce,
                                              bytes,
                                              gpus.toStdString(),
                                              Algorithm(algorithm));
        const CollectiveLesson L = buildCollectiveLesson(t, req);
        const CollectiveResult r = estimateCollective(t, req);
        double sum = L.latencyS;
        for (const LessonStep &s : L.steps) {
            QVERIFY(s.timeS > 0);
            QVERIFY(s.linkS > 0);
            sum += s.timeS;
        }
        RAILYARD_COMPARE_NEAR(sum, r.timeS, 0.01);
        RAILYARD_COMPARE_NEAR(L.estimateS, r.timeS, 1e-9);
        RAILYARD_COMPARE_NEAR(L.totalS, r.timeS, 0.01);
        // The lesson's bus bandwidth: the estimate's, as the times agree.
        RAILYARD_COMPARE_NEAR(L.busbwGBps(), r.busbwGBps, 0.011);
        QCOMPARE(L.busbwGBps(), L.bytes * busBandwidthFactor(L.op, L.ranks) / L.totalS / 1e9);
        CollectiveLesson none = L;
        none.totalS = 0;
        QCOMPARE(none.busbwGBps(), 0.0);
        QVERIFY(L.formula.back().find(formatSeconds(r.timeS)) != std::string::npos);
    }

    // Hierarchical on two servers, step by step: the seven NVLink steps of each half move S/8
    // per GPU at its NVLink rate, the two network steps S/16 per NIC at the NIC's rate; the
    // stages overlap (max + 0.15 x min) into the estimate's time.
    void hierarchicalStages()
    {
        const Topology &t = gmi();
        const double S = GiB;
        const CollectiveLesson L = buildCollectiveLesson(t,
                                                         request(CollectiveOp::AllReduce,
                                                                 S,
                                                                 "0-15",
                                                                 Algorithm::Hierarchical));
        QCOMPARE(int(L.steps.size()), 7 + 2 + 7);
        const double nvlink = t.gpuNvlinkRate(0) * 1e9;
        const double nic = t.links()[static_cast<std::size_t>(t.nicUplink(0))].effectiveGbPerS()
                           * 1e9;
        double nvS = 0, netS = 0;
        for (int s = 0; s < 16; ++s) {
            const LessonStep &st = L.steps[static_cast<std::size_t>(s)];
            QCOMPARE(st.network, s == 7 || s == 8);
            QCOMPARE(int(st.transfers.size()), 16);
            (st.network ? netS : nvS) += st.linkS;
            if (st.network) {
                RAILYARD_COMPARE_NEAR(st.linkS, S / 16 / nic, 1e-3);
                QCOMPARE(st.transfers[0].bytes, S / 16);
                // GPU k of server 0 sends to GPU k of server 1 and back.
                for (const LessonTransfer &x : st.transfers)
                    QCOMPARE(x.toRank % 8, x.fromRank % 8);
            } else {
                RAILYARD_COMPARE_NEAR(st.linkS, S / 8 / nvlink, 1e-3);
            }
        }
        const double nv = 2.0 * 7 / 8 * S / nvlink, net = 2.0 * 1 / 2 * S / 8 / nic;
        RAILYARD_COMPARE_NEAR(nvS, nv, 1e-3);
        RAILYARD_COMPARE_NEAR(netS, net, 1e-3);
        const double staged = std::max(nv, net) + 0.15 * std::min(nv, net);
        RAILYARD_COMPARE_NEAR(L.bandwidthS, staged, 1e-3);
        QVERIFY(L.stepsAloneS > L.bandwidthS); // the overlap the formula line explains
    }

    // 128 GPUs: 254 ring steps, sharing one set of links (sparse: only the links crossed).
    void largeRing()
    {
        const Topology &t = gmi();
        const CollectiveLesson L = buildCollectiveLesson(t,
                                                         request(CollectiveOp::AllReduce,
                                                                 GiB,
                                                                 "0-127",
                                                                 Algorithm::Ring));
        QCOMPARE(int(L.steps.size()), 254);
        QCOMPARE(int(L.linkSets.size()), 1);
        QVERIFY(L.linkSets[0].size() < std::size_t(t.linkCount()));
        QVERIFY(L.steps[0].network);
        const LessonProgress end = lessonProgress(L, 254);
        for (int r = 0; r < 128; ++r)
            QCOMPARE(end.done(r, CollectiveOp::AllReduce), 1.0);
    }

    // What the GPUs hold as a ring all-reduce goes: each has its own data at the start, one
    // finished chunk after the reduce-scatter, everything at the end.
    void progress()
    {
        const CollectiveLesson L = buildCollectiveLesson(gmi(),
                                                         request(CollectiveOp::AllReduce,
                                                                 GiB,
                                                                 "0-7",
                                                                 Algorithm::Ring));
        const LessonProgress start = lessonProgress(L, 0);
        QCOMPARE(start.done(0, CollectiveOp::AllReduce), 1.0 / 8);
        const LessonProgress half = lessonProgress(L, 7);
        for (int r = 0; r < 8; ++r) {
            int finished = 0;
            for (int c = 0; c < 8; ++c)
                finished += half.at(r, c) == 8;
            QCOMPARE(finished, 1);
            QCOMPARE(half.at(r, r), 8); // rank r ends the reduce-scatter with chunk r
        }
        const LessonProgress end = lessonProgress(L, 14);
        for (int r = 0; r < 8; ++r)
            QCOMPARE(end.done(r, CollectiveOp::AllReduce), 1.0);
        // Every algorithm leaves every GPU with the whole sum.
        for (const auto &[gpus, a] :
             std::vector<std::pair<std::string, Algorithm>>{{"0-31", Algorithm::Tree},
                                                            {"0-15", Algorithm::Hierarchical},
                                                            {"0-7", Algorithm::Nvls},
                                                            {"0-31", Algorithm::Nvls}}) {
            const CollectiveLesson K
                    = buildCollectiveLesson(gmi(), request(CollectiveOp::AllReduce, GiB, gpus, a));
            const LessonProgress p = lessonProgress(K, int(K.steps.size()));
            for (int r = 0; r < K.ranks; ++r)
                QVERIFY2(p.done(r, CollectiveOp::AllReduce) == 1.0, toString(K.algorithm));
        }
        const CollectiveLesson G = buildCollectiveLesson(gmi(),
                                                         request(CollectiveOp::AllGather,
                                                                 GiB,
                                                                 "0-15",
                                                                 Algorithm::Hierarchical));
        QCOMPARE(lessonProgress(G, 0).done(5, CollectiveOp::AllGather), 1.0 / 16);
        QCOMPARE(lessonProgress(G, int(G.steps.size())).done(5, CollectiveOp::AllGather), 1.0);
    }

    // An algorithm the hardware lacks says so.
    void unavailableAlgorithms()
    {
        const Topology a100 = load("collectives/a100-1node.railyard.json");
        try {
            buildCollectiveLesson(a100,
                                  request(CollectiveOp::AllReduce, GiB, "0-7", Algorithm::Nvls));
            QFAIL("NVLS on A100 was accepted");
        } catch (const InputError &e) {
            const std::string m = e.what();
            QVERIFY2(m.find("NVLS needs NVLink SHARP") != std::string::npos, e.what());
            QVERIFY2(m.find("A100") != std::string::npos, e.what());
        }
        QVERIFY_THROWS_EXCEPTION(InputError,
                                 buildCollectiveLesson(gmi(),
                                                       request(CollectiveOp::AllReduce,
                                                               GiB,
                                                               "0-15",
                                                               Algorithm::Sharp)));
        QVERIFY_THROWS_EXCEPTION(InputError,
                                 buildCollectiveLesson(gmi(),
                                                       request(CollectiveOp::AllReduce,
                                                               GiB,
                                                               "0-7",
                                                               Algorithm::Tree)));
        QVERIFY_THROWS_EXCEPTION(InputError,
                                 buildCollectiveLesson(gmi(),
                                                       request(CollectiveOp::AllGather,
                                                               GiB,
                                                               "0-7",
                                                               Algorithm::Nvls)));
        QVERIFY_THROWS_EXCEPTION(InputError,
                                 buildCollectiveLesson(gmi(),
                                                       request(CollectiveOp::AllReduce,
                                                               GiB,
                                                               "0-1023",
                                                               Algorithm::Ring)));
    }
};

QTEST_APPLESS_MAIN(TestCollectiveLesson)
#include "tst_collectivelesson.moc"
