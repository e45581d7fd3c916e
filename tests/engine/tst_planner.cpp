// The planner: its fast path agrees with the full evaluation, it drops what does not fit, ranks by
// each objective, and never proposes an invalid configuration.
#include "base/units.h"
#include "layout/layout.h"
#include "layout/softwarestack.h"
#include "planner/planner.h"
#include "step/evaluate.h"
#include "topology/topology.h"

#include <QTest>

#include "comparenear.h"
#include <random>

using namespace railyard::engine;
Q_DECLARE_METATYPE(railyard::engine::Layout)

namespace {

Layout example(const char *name)
{
    return readLayoutFile(std::string(RAILYARD_TEST_DATA "/") + name);
}

Layout shipped(const char *name)
{
    return readLayoutFile(std::string(RAILYARD_SOURCE_DIR "/layouts/") + name);
}

std::vector<int> divisors(int n)
{
    std::vector<int> out;
    for (int i = 1; i <= n; ++i)
        if (n % i == 0)
            out.push_back(i);
    return out;
}

template<class T>
T pick(std::mt19937 &rng, const std::vector<T> &v)
{
    return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
}

// A random configuration the planner considers valid.
PlanChoice randomValid(std::mt19937 &rng, const Layout &l, const PlanPricer &pricer)
{
    const int gpus = l.cluster.gpuCount();
    const std::vector<int> all = divisors(gpus);
    for (int attempt = 0; attempt < 100000; ++attempt) {
        PlanChoice c;
        c.tp = pick(rng, all);
        c.cp = pick(rng, divisors(gpus / c.tp));
        c.pp = pick(rng, divisors(gpus / (c.tp * c.cp)));
        c.dp = gpus / (c.tp * c.cp * c.pp);
        c.ep = pick(rng, divisors(c.tp * c.cp * c.dp));
        if (std::uniform_int_distribution<int>(0, 1)(rng) == 0)
            c.ep = 1;
        c.vp = std::uniform_int_distribution<int>(0, 2)(rng) == 0
                       ? pick(rng, std::vector<int>{2, 3, 4})
                       : 1;
        if (l.training.globalBatch % c.dp != 0)
            continue;
        c.microBatch = pick(rng, divisors(l.training.globalBatch / c.dp));
        c.recompute = pick(rng,
                           std::vector<Recompute>{Recompute::None,
                                                  Recompute::Selective,
                                                  Recompute::Full});
        c.sharding = pick(rng,
                          std::vector<Sharding>{Sharding::Zero0,
                                                Sharding::Zero1,
                                                Sharding::Zero2,
                                                Sharding::Fsdp,
                                                Sharding::Zero3});
        // Pipeline stages inside replicas where that order applies, half the time.
        if (std::uniform_int_distribution<int>(0, 1)(rng) == 0)
            c.order = PlanOrder::PipelineInner;
        // Activation offload where the stack offers it and the shape allows it, half the time.
        const StackProfile *stack = findStack(l.training.stack);
        if (stack && stack->activationOffload && c.pp == 1 && c.recompute == Recompute::None
            && std::uniform_int_distribution<int>(0, 1)(rng) == 0)
            c.offloadLayers = std::uniform_int_distribution<int>(1, 60)(rng);
        if (pricer.valid(c))
            return c;
    }
    return {};
}

QString describe(const PlanChoice &c)
{
    return QString("tp%1 cp%2 ep%3 pp%4 vp%5 dp%6 mb%7 recompute %8 offload %11 %9 %10")
            .arg(c.tp)
            .arg(c.cp)
            .arg(c.ep)
            .arg(c.pp)
            .arg(c.vp)
            .arg(c.dp)
            .arg(c.microBatch)
            .arg(toString(c.recompute))
            .arg(toString(c.sharding))
            .arg(toString(c.order))
            .arg(c.offloadLayers);
}

// Llama 3 70B in FP8 under NeMo on one GB200 NVL72 rack at 8K tokens, as Megatron-Bridge ran
// it on GB200 with Megatron-FSDP and 40 layers' activations offloaded to the host (run W10 of
// tests/data/throughput, which has 64 of the rack's GPUs).
Layout gb200Llama70b()
{
    Layout l = shipped("gb200-nvl72-rack.railyard.json");
    l.model = ModelConfig{};
    l.model->preset = "llama3-70b";
    l.training.seqLen = 8192;
    l.training.globalBatch = 288;
    l.training.precision = Precision::Fp8;
    l.training.stack = "nemo";
    applyStackDefaults(l.training, *findStack("nemo"));
    l.parallel = ParallelConfig{};
    l.parallel.dp = 72;
    l.mapping.clear();
    return l;
}

} // namespace

class TestPlanner : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void fastPathAgreesWithEvaluation_data()
    {
        QTest::addColumn<Layout>("layout");
        QTest::addColumn<int>("samples");
        QTest::addColumn<unsigned>("seed");
        // Llama 3 70B on 128 H200, rail-optimized, 4 queue pairs.
        QTest::newRow("dense-h200-rail") << example("example.railyard.json") << 250 << 1u;
        // An MoE model (128 experts, top 8) in FP8 on 16 H100.
        QTest::newRow("moe-h100") << example("example-moe.railyard.json") << 250 << 2u;
        // The same on 1,024 GPUs: four scalable units, so the fast path prices the groups of
        // one period of the topology (plannerpatterns.cpp) where the evaluation prices all.
        Layout units = example("example.railyard.json");
        units.cluster.nodes = 128;
        QTest::newRow("dense-h200-rail-1024") << units << 100 << 5u;
        // Spine 2:1 oversubscribed (42 servers per unit: no period, every group priced), ECMP
        // hashing (no adaptive routing).
        units.cluster.fabric.oversubscription = 2;
        units.cluster.tuning.adaptiveRouting = false;
        QTest::newRow("dense-h200-rail-1024-oversubscribed") << units << 100 << 6u;
        // The same dense model on 2,048 GPUs behind a three-tier fabric: two pods of 32 leaves
        // (one period each), ECMP hashing.
        Layout tiers = example("example.railyard.json");
        tiers.cluster.nodes = 256;
        tiers.cluster.fabric.kind = FabricKind::ThreeTier;
        tiers.cluster.tuning.adaptiveRouting = false;
        tiers.training.globalBatch = 512;
        QTest::newRow("dense-three-tier") << tiers << 100 << 3u;
        // MoE on two GB200 NVL72 racks over InfiniBand, with DeepEP's dispatcher.
        Layout nvl = shipped("gb200-nvl72-two-racks-ib.railyard.json");
        nvl.training.moeDispatcher = MoeDispatcher::DeepEP;
        QTest::newRow("nvl72-two-racks") << nvl << 200 << 4u;
        // The same under NeMo, whose MoE layers' host is priced (step/hostlaunch.h: Grace
        // launches, one GEMM per local expert); and the H100 MoE example under Megatron-Core.
        Layout nemo = nvl;
        applyStackDefaults(nemo.training, *findStack("nemo"));
        QTest::newRow("nvl72-two-racks-nemo") << nemo << 100 << 7u;
        Layout mcore = example("example-moe.railyard.json");
        applyStackDefaults(mcore.training, *findStack("megatron-core"));
        QTest::newRow("moe-h100-megatron-core") << mcore << 100 << 8u;
        // A dense model under NeMo, whose activation offload the planner may propose.
        QTest::newRow("dense-gb200-nemo") << gb200Llama70b() << 100 << 9u;
        // Hybrid sharding over each server's 8 GPUs of 128, which FSDP plans keep where 8
        // divides their DP x CP (shard groups and replica groups priced by the fast path).
        Layout hybrid = example("example.railyard.json");
        applyStackDefaults(hybrid.training, *findStack("pytorch-fsdp"));
        hybrid.training.optimizer.fsdp = true;
        hybrid.training.optimizer.shardGroup = 8;
        QTest::newRow("hybrid-sharding") << hybrid << 100 << 10u;
    }

    void fastPathAgreesWithEvaluation()
    {
        QFETCH(Layout, layout);
        QFETCH(int, samples);
        QFETCH(unsigned, seed);
        const Topology topology = buildTopology(layout.cluster, Catalog::builtin());
        PlanPricer pricer(layout, topology);
        QVERIFY2(pricer.ok(), pricer.error().c_str());
        std::mt19937 rng(seed);
        EvaluationWorkspace workspace;
        double worstStep = 0, worstMemory = 0;
        int inside = 0;    // configurations with pipeline stages inside replicas
        int offloaded = 0; // with activations offloaded to host memory
        int hybrid = 0;    // sharded in the layout's hybrid groups
        for (int i = 0; i < samples; ++i) {
            const PlanChoice c = randomValid(rng, layout, pricer);
            QVERIFY(pricer.valid(c));
            inside += c.order == PlanOrder::PipelineInner ? 1 : 0;
            offloaded += c.offloadLayers > 0 ? 1 : 0;
            const PlanPrice fast = pricer.price(c, true);
            hybrid += fast.shardGroup > 0 ? 1 : 0;
            const Evaluation full = evaluate(applyPlan(layout, c),
                                             topology,
                                             workspace,
                                             {.linkLoads = false, .timeline = false});
            QVERIFY2(full.ok, (describe(c) + ": " + full.error.c_str()).toUtf8());
            double fullMemory = 0;
            for (double g : full.memoryGiBPerStage)
                fullMemory = std::max(fullMemory, g);
            const double stepError = std::abs(fast.stepTimeS / full.stepTimeS - 1);
            const double memoryError = std::abs(fast.memoryGiB / fullMemory - 1);
            worstStep = std::max(worstStep, stepError);
            worstMemory = std::max(worstMemory, memoryError);
            QVERIFY2(stepError <= 0.005,
                     qPrintable(describe(c)
                                + QString(": fast %1 s, full %2 s")
                                          .arg(fast.stepTimeS, 0, 'g', 8)
                                          .arg(full.stepTimeS, 0, 'g', 8)));
            QVERIFY2(memoryError <= 0.005,
                     qPrintable(describe(c)
                                + QString(": fast %1 GiB, full %2 GiB")
                                          .arg(fast.memoryGiB)
                                          .arg(fullMemory)));
            // The evaluation's uncertainty band for the plan's regime, and its basis.
            QCOMPARE(fast.bandFraction, full.stepTimeBand.fraction);
            QVERIFY(fast.bandBasis >= 0);
            // (Evaluated without the stack range; the plan's basis adds that evaluating the plan
            // would widen it when the layout names no stack.)
            const std::string &planBasis = pricer.bandBases()[std::size_t(fast.bandBasis)];
            QCOMPARE(planBasis.substr(0, full.stepTimeBand.basis.size()), full.stepTimeBand.basis);
            QCOMPARE(planBasis.find("no software stack named") != std::string::npos,
                     layout.training.stack.empty());
            // The same fit decision as the evaluation's out-of-memory check.
            QCOMPARE(fast.fits, fullMemory <= full.hbmGiB);
        }
        qInfo("worst relative difference: step %.2e, memory %.2e (%d of %d with pipeline stages "
              "inside replicas, %d with activation offload)",
              worstStep,
              worstMemory,
              inside,
              samples,
              offloaded);
        QVERIFY(inside > 0);
        QCOMPARE(offloaded > 0, findStack(layout.training.stack)->activationOffload);
        QCOMPARE(hybrid > 0, layout.training.optimizer.shardGroup > 0);
    }

    void memoryFilterDropsWhatDoesNotFit()
    {
        // Llama 3 70B without model parallelism on H200: 70B parameters of weights, gradients
        // and Adam state need far more than 141 GB on one GPU, so TP1 PP1 never appears.
        const Layout l = example("example.railyard.json");
        const Topology topology = buildTopology(l.cluster, Catalog::builtin());
        PlanPricer pricer(l, topology);
        PlanChoice c;
        c.tp = 1;
        c.pp = 1;
        c.dp = 128;
        c.microBatch = 1;
        c.recompute = Recompute::Full;
        c.sharding = Sharding::Zero1;
        QVERIFY(pricer.valid(c));
        const PlanPrice p = pricer.price(c);
        QVERIFY(!p.fits);
        QVERIFY(p.memoryGiB > 200); // the BF16 weights alone are 131 GiB
        QCOMPARE(p.stepTimeS, 0.0); // not priced
        // With FSDP the same sizes fit: everything is sharded 128 ways.
        c.sharding = Sharding::Fsdp;
        QVERIFY(pricer.price(c).fits);

        PlanOptions o;
        o.top = 100000;
        const PlanSearch s = searchPlans(l, topology, o);
        QVERIFY(s.ok);
        QVERIFY(s.fitting > 0);
        QVERIFY(s.fitting < s.evaluated);
        QCOMPARE(static_cast<std::int64_t>(s.plans.size()), s.fitting);
        for (const Plan &p : s.plans) {
            QVERIFY(p.price.fits);
            QVERIFY(p.price.memoryGiB <= s.hbmGiB);
            QVERIFY(!(p.choice.tp == 1 && p.choice.pp == 1 && p.choice.sharding == Sharding::Zero1));
        }
    }

    void rankingFollowsTheObjective_data()
    {
        QTest::addColumn<int>("objective");
        QTest::newRow("step_time") << int(PlanObjective::StepTime);
        QTest::newRow("cost") << int(PlanObjective::Cost);
        QTest::newRow("tokens_per_dollar") << int(PlanObjective::TokensPerDollar);
    }

    void rankingFollowsTheObjective()
    {
        QFETCH(int, objective);
        const Layout l = example("example-moe.railyard.json");
        Layout priced = l;
        priced.cluster.pricePerGpuHour = 2.5;
        const Topology topology = buildTopology(priced.cluster, Catalog::builtin());
        PlanOptions o;
        o.objective = PlanObjective(objective);
        o.top = 25;
        const PlanSearch s = searchPlans(priced, topology, o);
        QVERIFY(s.ok);
        QCOMPARE(int(s.plans.size()), 25);
        for (std::size_t i = 1; i < s.plans.size(); ++i) {
            const PlanPrice &a = s.plans[i - 1].price, &b = s.plans[i].price;
            switch (PlanObjective(objective)) {
            case PlanObjective::StepTime: QVERIFY(a.stepTimeS <= b.stepTimeS); break;
            case PlanObjective::Cost:
                QVERIFY(a.costPerStep <= b.costPerStep);
                QVERIFY(a.costPerStep > 0);
                break;
            case PlanObjective::TokensPerDollar:
                QVERIFY(a.tokensPerDollar >= b.tokensPerDollar);
                break;
            }
        }
        // The best is the best of all: a larger search keeps it first.
        o.top = 1000;
        const PlanSearch wide = searchPlans(priced, topology, o);
        QCOMPARE(wide.plans.front().choice, s.plans.front().choice);
        for (const Plan &p : wide.plans)
            QVERIFY(!planBefore(p.price, s.plans.front().price, o.objective));
        // Cost per step is the step time at $2.50 per GPU-hour on 16 GPUs.
        const PlanPrice &best = s.plans.front().price;
        RAILYARD_COMPARE_ABS(best.costPerStep, 2.5 * 16 * best.stepTimeS / 3600, 1e-12);
    }

    // The Pareto front of step time against memory is exactly the fitting plans no other beats
    // on both: checked against every fitting plan of the search (top = all of them).
    void paretoFrontIsTheUndominatedPlans()
    {
        const Layout l = example("example-moe.railyard.json");
        const Topology topology = buildTopology(l.cluster, Catalog::builtin());
        PlanOptions o;
        o.pareto = true;
        o.top = 1 << 20;
        const PlanSearch s = searchPlans(l, topology, o);
        QVERIFY(s.ok);
        QCOMPARE(std::int64_t(s.plans.size()), s.fitting);
        QVERIFY(s.pareto.size() >= 3);
        const auto dominated = [&](const PlanPrice &p) {
            for (const Plan &q : s.plans)
                if (q.price.memoryGiB <= p.memoryGiB && q.price.stepTimeS <= p.stepTimeS
                    && (q.price.memoryGiB < p.memoryGiB || q.price.stepTimeS < p.stepTimeS))
                    return true;
            return false;
        };
        std::size_t undominated = 0;
        std::vector<std::pair<double, double>> expected;
        for (const Plan &p : s.plans)
            if (!dominated(p.price))
                expected.emplace_back(p.price.memoryGiB, p.price.stepTimeS);
        std::sort(expected.begin(), expected.end());
        expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
        undominated = expected.size();
        QCOMPARE(s.pareto.size(), undominated);
        for (std::size_t i = 0; i < s.pareto.size(); ++i) {
            QCOMPARE(s.pareto[i].price.memoryGiB, expected[i].first);
            QCOMPARE(s.pareto[i].price.stepTimeS, expected[i].second);
            if (i > 0)
                QVERIFY(s.pareto[i].price.stepTimeS < s.pareto[i - 1].price.stepTimeS);
        }
        // The fastest plan ends the front; the leanest begins it.
        QCOMPARE(s.pareto.back().price.stepTimeS, s.plans.front().price.stepTimeS);
        // Off by default.
        QVERIFY(searchPlans(l, topology, {}).pareto.empty());
    }

    void invalidCombinationsNeverAppear()
    {
        // The MoE model: 32 heads, 4 KV heads, 128 experts, 48 layers.
        const Layout l = example("example-moe.railyard.json");
        const Topology topology = buildTopology(l.cluster, Catalog::builtin());
        PlanOptions o;
        o.top = 1000000;
        const PlanSearch s = searchPlans(l, topology, o);
        QVERIFY(s.ok);
        QCOMPARE(static_cast<std::int64_t>(s.plans.size()), s.fitting);
        PlanPricer pricer(l, topology);
        bool sawEp = false, sawVp = false, sawCp = false;
        for (const Plan &p : s.plans) {
            const PlanChoice &c = p.choice;
            QVERIFY2(pricer.valid(c), qPrintable(describe(c)));
            QCOMPARE(32 % c.tp, 0);
            QVERIFY(4 % c.tp == 0 || c.tp % 4 == 0);
            QCOMPARE(128 % c.ep, 0);
            QCOMPARE((c.tp * c.cp * c.dp) % c.ep, 0);
            QCOMPARE(c.tp * c.cp * c.pp * c.dp, 16);
            QCOMPARE(512 % (c.dp * c.microBatch), 0);
            QVERIFY(c.vp == 1 || 48 % (c.pp * c.vp) == 0);
            QVERIFY(c.cp == 1 || 4096 % (2 * c.cp) == 0);
            sawEp = sawEp || c.ep > 1;
            sawVp = sawVp || c.vp > 1;
            sawCp = sawCp || c.cp > 1;
        }
        QVERIFY(sawEp && sawVp && sawCp); // the search does reach every dimension
        // Invalid ones are refused with a reason.
        std::string why;
        PlanChoice c;
        c.tp = 16; // 32 heads but 4 KV heads: 16 is a multiple of 4, fine; 3 is not valid
        c.dp = 1;
        c.sharding = Sharding::Zero0;
        QVERIFY(pricer.valid(c, &why));
        c.tp = 1;
        c.dp = 16;
        c.ep = 3;
        c.sharding = Sharding::Zero1;
        QVERIFY(!pricer.valid(c, &why));
        QVERIFY(why.find("EP") != std::string::npos);
    }

    void pipelineInsideReplicasIsSearched()
    {
        // Llama 3 70B on 1,024 H200 behind a 4:1 oversubscribed spine: pipeline stages inside
        // replicas keep most pipeline sends under one leaf and send the gradients across.
        Layout l = example("example.railyard.json");
        l.cluster.nodes = 128;
        l.cluster.fabric.oversubscription = 4;
        const Topology topology = buildTopology(l.cluster, Catalog::builtin());
        PlanPricer pricer(l, topology);
        PlanChoice c;
        c.tp = 8;
        c.pp = 8;
        c.dp = 16;
        c.microBatch = 1;
        QVERIFY(pricer.valid(c));
        const PlanPrice megatron = pricer.price(c, true);
        c.order = PlanOrder::PipelineInner;
        QVERIFY(pricer.valid(c));
        const PlanPrice inner = pricer.price(c, true);
        QCOMPARE(inner.memoryGiB, megatron.memoryGiB);
        QVERIFY2(inner.exposed.dp != megatron.exposed.dp
                         || inner.exposed.ppP2p != megatron.exposed.ppP2p,
                 "the order moves the DP and PP groups");
        QCOMPARE(applyPlan(l, c).parallel.order, std::string("tp-cp-ep-pp-dp"));
        // Not where it changes nothing (no DP), nor with CP (DP x CP groups would not be regular).
        c.tp = 16;
        c.pp = 64;
        c.dp = 1;
        std::string why;
        QVERIFY(!pricer.valid(c, &why));
        QVERIFY(why.find("inside replicas") != std::string::npos);
        c.tp = 8;
        c.pp = 4;
        c.cp = 2;
        c.dp = 16;
        QVERIFY(!pricer.valid(c, &why));
        QVERIFY(why.find("CP 1") != std::string::npos);
        // The search tries both orders.
        PlanOptions all;
        all.top = 100000;
        const PlanSearch s = searchPlans(l, topology, all);
        int inside = 0;
        for (const Plan &p : s.plans)
            inside += p.choice.order == PlanOrder::PipelineInner ? 1 : 0;
        QVERIFY(inside > 0);
        QVERIFY(inside < int(s.plans.size()));
    }

    void interleavingNeedsMicroBatches()
    {
        // Virtual stages fill the pipeline with other micro-batches: with as many micro-batches
        // as stages the bubble shrinks by VP; with one, a micro-batch's chunks run one stage
        // after another and interleaving saves nothing (the shared formula: stepcost.cpp).
        const Layout l = example("example.railyard.json"); // 128 H200, global batch 256
        const Topology topology = buildTopology(l.cluster, Catalog::builtin());
        PlanPricer pricer(l, topology);
        PlanChoice c;
        c.tp = 8;
        c.pp = 4;
        c.dp = 4;
        c.microBatch = 16; // 4 micro-batches per replica: as many as stages
        const PlanPrice plain = pricer.price(c, true);
        c.vp = 5;
        const PlanPrice interleaved = pricer.price(c, true);
        QCOMPARE(plain.microBatches, 4);
        RAILYARD_COMPARE_NEAR(interleaved.exposed.ppBubble * 5, plain.exposed.ppBubble, 1e-9);
        c.microBatch = 64; // one micro-batch
        const PlanPrice one = pricer.price(c, true);
        c.vp = 1;
        const PlanPrice onePlain = pricer.price(c, true);
        QCOMPARE(one.microBatches, 1);
        QVERIFY(one.exposed.ppBubble > 0);
        RAILYARD_COMPARE_NEAR(one.exposed.ppBubble, onePlain.exposed.ppBubble, 1e-9);
        // Two micro-batches on four stages: two stages idle, then the interleaved tail.
        c.microBatch = 32;
        const PlanPrice twoPlain = pricer.price(c, true);
        c.vp = 5;
        const PlanPrice two = pricer.price(c, true);
        RAILYARD_COMPARE_ABS(two.exposed.ppBubble / twoPlain.exposed.ppBubble,
                             (2 + 1.0 / 5) / 3,
                             1e-9);
    }

    // The search prices every fitting configuration with its collectives alone first (a lower
    // bound) and shares the links only where the bound could still make the top plans or the
    // front: the same plans at the same prices, to the bit, as sharing the links of every one.
    void boundFirstFindsWhatSchedulingEveryOneFinds_data()
    {
        QTest::addColumn<QString>("layout");
        QTest::addColumn<int>("objective");
        // Shipped layouts whose collectives overlap on shared links (before the links were
        // shared, their timelines put 117% and 190-198% of a link's rate on InfiniBand).
        QTest::newRow("gmi-h200-cluster") << "gmi-h200-cluster" << int(PlanObjective::StepTime);
        QTest::newRow("moe-h200-ib") << "moe-h200-ib" << int(PlanObjective::TokensPerDollar);
        QTest::newRow("zero3-scaling") << "zero3-scaling" << int(PlanObjective::Cost);
    }

    void boundFirstFindsWhatSchedulingEveryOneFinds()
    {
        QFETCH(QString, layout);
        QFETCH(int, objective);
        Layout l = shipped(qPrintable(layout + ".railyard.json"));
        l.cluster.pricePerGpuHour = 2.5;
        const Topology topology = buildTopology(l.cluster, Catalog::builtin());
        PlanOptions o;
        o.objective = PlanObjective(objective);
        o.top = 20;
        o.pareto = true;
        const PlanSearch bounded = searchPlans(l, topology, o);
        o.boundFirst = false;
        const PlanSearch every = searchPlans(l, topology, o);
        QVERIFY(bounded.ok && every.ok);
        QCOMPARE(bounded.evaluated, every.evaluated);
        QCOMPARE(bounded.fitting, every.fitting);
        QCOMPARE(every.scheduled, every.fitting);
        qInfo("%lld of %lld fitting configurations scheduled",
              static_cast<long long>(bounded.scheduled),
              static_cast<long long>(bounded.fitting));
        // The bound does leave most configurations unscheduled.
        QVERIFY2(bounded.scheduled * 4 < bounded.fitting,
                 qPrintable(QString("%1 of %2").arg(bounded.scheduled).arg(bounded.fitting)));
        const auto same = [&](const std::vector<Plan> &a, const std::vector<Plan> &b) {
            QCOMPARE(a.size(), b.size());
            for (std::size_t i = 0; i < a.size(); ++i) {
                QVERIFY2(a[i].choice == b[i].choice, qPrintable(describe(a[i].choice)));
                QCOMPARE(a[i].price.stepTimeS, b[i].price.stepTimeS);
                QCOMPARE(a[i].price.memoryGiB, b[i].price.memoryGiB);
                QCOMPARE(a[i].price.costPerStep, b[i].price.costPerStep);
                QCOMPARE(a[i].price.exposed.sum(), b[i].price.exposed.sum());
            }
        };
        QCOMPARE(int(bounded.plans.size()), 20);
        same(bounded.plans, every.plans);
        QVERIFY(bounded.pareto.size() >= 2);
        same(bounded.pareto, every.pareto);
        // The prices are the shared links' (price()), which the bound is below, and here the
        // sharing moves some of them.
        PlanPricer pricer(l, topology);
        int longer = 0;
        for (const Plan &p : every.plans) {
            const PlanPrice alone = pricer.priceAlone(p.choice);
            QCOMPARE(pricer.price(p.choice).stepTimeS, p.price.stepTimeS);
            QVERIFY(alone.stepTimeS <= p.price.stepTimeS);
            longer += alone.stepTimeS < p.price.stepTimeS * (1 - 1e-9) ? 1 : 0;
        }
        QVERIFY(longer > 0);
    }

    // priceAlone() is a lower bound of price() wherever the search may go.
    void pricingAloneIsALowerBound()
    {
        for (const char *name : {"moe-h200-ib.railyard.json",
                                 "oversubscribed-spine.railyard.json",
                                 "zero3-scaling.railyard.json",
                                 "gmi-h200-cluster.railyard.json"}) {
            const Layout l = shipped(name);
            const Topology topology = buildTopology(l.cluster, Catalog::builtin());
            PlanPricer pricer(l, topology);
            std::mt19937 rng(7);
            int longer = 0;
            for (int i = 0; i < 300; ++i) {
                const PlanChoice c = randomValid(rng, l, pricer);
                const PlanPrice alone = pricer.priceAlone(c, true);
                const PlanPrice shared = pricer.price(c, true);
                QVERIFY2(alone.stepTimeS <= shared.stepTimeS,
                         qPrintable(describe(c)
                                    + QString(": alone %1 s, shared %2 s")
                                              .arg(alone.stepTimeS, 0, 'g', 17)
                                              .arg(shared.stepTimeS, 0, 'g', 17)));
                QVERIFY(alone.costPerStep <= shared.costPerStep);
                QCOMPARE(alone.memoryGiB, shared.memoryGiB);
                // shareLinks() from the bound gives price()'s answer.
                QCOMPARE(pricer.shareLinks(pricer.priceAlone(c, true))->stepTimeS, shared.stepTimeS);
                longer += alone.stepTimeS < shared.stepTimeS * (1 - 1e-6) ? 1 : 0;
            }
            QVERIFY2(longer > 0, name);
        }
    }

    void cancelAndProgress()
    {
        const Layout l = example("example.railyard.json");
        const Topology topology = buildTopology(l.cluster, Catalog::builtin());
        std::atomic<bool> cancel{true};
        PlanOptions o;
        o.cancel = &cancel;
        const PlanSearch s = searchPlans(l, topology, o);
        QVERIFY(s.cancelled);
        const PlanSearch all = searchPlans(l, topology, {});
        QVERIFY(s.evaluated < all.evaluated);
        // Progress reported with a zero interval: every check, increasing.
        std::vector<PlanProgress> seen;
        PlanOptions p;
        p.progressIntervalS = 0;
        p.progress = [&](const PlanProgress &x) { seen.push_back(x); };
        const PlanSearch again = searchPlans(l, topology, p);
        QVERIFY(!seen.empty());
        for (std::size_t i = 1; i < seen.size(); ++i)
            QVERIFY(seen[i].evaluated > seen[i - 1].evaluated);
        QVERIFY(seen.back().evaluated <= again.evaluated);
        QCOMPARE(again.evaluated, all.evaluated);
    }

    // The plans the planner ranks best raise no placement warning that prices step time: the
    // planner searched the placements, so a saving it did not find is one no placement has.
    // (The 16k preset's best plan, TP4 CP8 PP64, was warned "CP group 0 spans 4 NVLink
    // domains (+73% CP time)", 0.2 s a step, for each of 2,048 groups: CP8 beside TP4 on
    // 8-GPU servers spans 4 servers however it is placed.)
    void bestPlansRaiseNoCostlyWarning_data()
    {
        QTest::addColumn<Layout>("layout");
        QTest::newRow("llama3.1-405b-16k-h100") << shipped("llama3.1-405b-16k-h100.railyard.json");
        QTest::newRow("gmi-h200-cluster") << shipped("gmi-h200-cluster.railyard.json");
        QTest::newRow("moe-h200-ib") << shipped("moe-h200-ib.railyard.json");
        QTest::newRow("example") << example("example.railyard.json");
    }

    void bestPlansRaiseNoCostlyWarning()
    {
        QFETCH(Layout, layout);
        const Topology topology = buildTopology(layout.cluster, Catalog::builtin());
        PlanOptions o;
        o.top = 5;
        const PlanSearch s = searchPlans(layout, topology, o);
        QVERIFY(s.ok);
        QVERIFY(!s.plans.empty());
        for (const Plan &p : s.plans) {
            const Evaluation e = evaluate(applyPlan(layout, p.choice), topology);
            QVERIFY(e.ok);
            for (const Warning &w : e.warnings)
                QVERIFY2(w.costS <= 0,
                         (w.message + ": " + std::to_string(w.costS) + " s a step").c_str());
        }
    }

    // The warning still names a group that spans more domains than it needs, and prices what
    // the fewest would save: CP8 beside TP4 fits in 4 servers of 8 GPUs, and put DP between
    // TP and CP (tp-dp-cp-ep-pp) each CP group spans 8.
    void aGroupSpreadWiderThanItNeedsIsWarned()
    {
        Layout l = example("example.railyard.json");
        l.parallel.tp = 4;
        l.parallel.cp = 8;
        l.parallel.pp = 1;
        l.parallel.vp = 1;
        l.parallel.dp = 4;
        l.training.microBatch = 1;
        const Topology topology = buildTopology(l.cluster, Catalog::builtin());
        const auto cpWarnings = [&](const std::string &order) {
            Layout v = l;
            v.parallel.order = order;
            const Evaluation e = evaluate(v, topology);
            std::vector<Warning> out;
            for (const Warning &w : e.warnings)
                if (w.code == "cp-placement")
                    out.push_back(w);
            return out;
        };
        QVERIFY(cpWarnings("tp-cp-ep-dp-pp").empty()); // 4 servers each: the fewest
        const std::vector<Warning> wide = cpWarnings("tp-dp-cp-ep-pp");
        QCOMPARE(wide.size(), std::size_t(8)); // 16 groups, the first 8 named
        QVERIFY2(wide.front().message.find("spans 8 NVLink domains where 4 would do")
                         != std::string::npos,
                 wide.front().message.c_str());
        QVERIFY(wide.front().costS > 0);
    }

    // Where the stack offers activation offload (step/offload.h), a configuration without PP or
    // recomputation that does not fit is tried with the fewest layers offloaded that make it
    // fit. On GB200 the planner then finds what Megatron-Bridge runs there: Llama 3 70B with
    // Megatron-FSDP, micro-batch 2 and about half the layers offloaded.
    void proposesTheFewestOffloadedLayersThatFit()
    {
        const Layout l = gb200Llama70b();
        const Topology topology = buildTopology(l.cluster, Catalog::builtin());
        PlanOptions o;
        o.top = 50;
        const PlanSearch s = searchPlans(l, topology, o);
        QVERIFY(s.ok);
        PlanPricer pricer(l, topology);
        int offloaded = 0;
        for (const Plan &p : s.plans) {
            const PlanChoice &c = p.choice;
            QVERIFY2(pricer.valid(c), qPrintable(describe(c)));
            if (c.offloadLayers == 0)
                continue;
            ++offloaded;
            QCOMPARE(c.pp, 1);
            QCOMPARE(c.recompute, Recompute::None);
            // It fits as offloaded, not with one layer fewer, nor without.
            QVERIFY(pricer.price(c).fits);
            PlanChoice fewer = c;
            fewer.offloadLayers = c.offloadLayers - 1;
            QVERIFY2(!pricer.price(fewer).fits, qPrintable(describe(fewer)));
            QCOMPARE(pricer.offloadToFit(c), c.offloadLayers);
        }
        QVERIFY(offloaded > 0);
        // Micro-batch 2 with FSDP and every GPU a replica, as Megatron-Bridge set it, is among
        // the plans, with 39 of the 80 layers offloaded (it sets 40).
        const auto fsdp2 = std::find_if(s.plans.begin(), s.plans.end(), [](const Plan &p) {
            return p.choice.tp == 1 && p.choice.pp == 1 && p.choice.cp == 1
                   && p.choice.microBatch == 2 && p.choice.sharding == Sharding::Fsdp;
        });
        QVERIFY(fsdp2 != s.plans.end());
        QCOMPARE(fsdp2->choice.offloadLayers, 39);
        // The assumption says so; the applied plan carries the offload and evaluates alike.
        QVERIFY(std::any_of(s.assumptions.begin(), s.assumptions.end(), [](const std::string &a) {
            return a.find("activation offload") != std::string::npos;
        }));
        const Layout applied = applyPlan(l, fsdp2->choice);
        QCOMPARE(applied.training.offloadLayers, 39);
        EvaluationWorkspace workspace;
        const Evaluation e = evaluate(applied, topology, workspace, {});
        QVERIFY(e.ok);
        RAILYARD_COMPARE_NEAR(e.stepTimeS, fsdp2->price.stepTimeS, 0.005);
        QVERIFY(e.memoryGiBPerStage[0] <= e.hbmGiB);

        // PP or recomputation rule it out, and so does a stack without it (torchtitan).
        std::string why;
        PlanChoice c = fsdp2->choice;
        c.pp = 2;
        c.dp = 36;
        QVERIFY(!pricer.valid(c, &why));
        QVERIFY(why.find("offload") != std::string::npos);
        c = fsdp2->choice;
        c.recompute = Recompute::Selective;
        QVERIFY(!pricer.valid(c, &why));
        Layout titan = l;
        titan.training.stack = "torchtitan";
        applyStackDefaults(titan.training, *findStack("torchtitan"));
        const PlanSearch t = searchPlans(titan, topology, o);
        QVERIFY(t.ok && !t.plans.empty());
        for (const Plan &p : t.plans)
            QCOMPARE(p.choice.offloadLayers, 0);
        PlanPricer titanPricer(titan, topology);
        QCOMPARE(titanPricer.offloadToFit(fsdp2->choice), 0);
    }

    // When nothing fits, the configuration that comes closest is told with as much offloaded
    // as offload can take: Llama 3 70B on one tray of 4 GB200 needs more than the HBM however
    // it is cut, least with 79 of its 80 layers' activations in host memory.
    void nothingFitsSaysWhatOffloadWouldNeed()
    {
        Layout l = gb200Llama70b();
        l.cluster.nodes = 1;
        l.cluster.nvlinkDomain = 4;
        l.training.globalBatch = 48;
        l.parallel.dp = 4;
        const Topology topology = buildTopology(l.cluster, Catalog::builtin());
        const PlanSearch s = searchPlans(l, topology, PlanOptions{});
        QVERIFY(s.ok);
        QCOMPARE(s.fitting, std::int64_t(0));
        QVERIFY(s.leastMemory.has_value());
        const PlanChoice &c = s.leastMemory->choice;
        QCOMPARE(c.offloadLayers, 79);
        PlanPricer pricer(l, topology);
        QVERIFY(pricer.valid(c));
        PlanChoice kept = c;
        kept.offloadLayers = 0;
        const PlanPrice without = pricer.price(kept);
        QVERIFY(!without.fits);
        QVERIFY2(s.leastMemory->price.memoryGiB < without.memoryGiB - 1.0,
                 qPrintable(QString::number(s.leastMemory->price.memoryGiB)));
        QVERIFY2(s.noFit.find("the smallest needs " + formatNumber(s.leastMemory->price.memoryGiB, 3)
                              + " GiB per GPU with 79 layers' activations offloaded to host memory")
                         != std::string::npos,
                 s.noFit.c_str());
        // Under a stack without offload the closest keeps every layer's activations.
        l.training.stack = "torchtitan";
        applyStackDefaults(l.training, *findStack("torchtitan"));
        const PlanSearch t = searchPlans(l, topology, PlanOptions{});
        QVERIFY(t.ok && t.leastMemory);
        QCOMPARE(t.leastMemory->choice.offloadLayers, 0);
        QVERIFY(t.noFit.find("offloaded") == std::string::npos);
    }

    void applyPlanSetsTheLayout()
    {
        const Layout l = example("example.railyard.json");
        PlanChoice c;
        c.tp = 4;
        c.cp = 2;
        c.pp = 2;
        c.vp = 5;
        c.dp = 8;
        c.microBatch = 2;
        c.recompute = Recompute::Full;
        c.sharding = Sharding::Zero2;
        const Layout a = applyPlan(l, c);
        QCOMPARE(a.parallel.tp, 4);
        QCOMPARE(a.parallel.cp, 2);
        QCOMPARE(a.parallel.pp, 2);
        QCOMPARE(a.parallel.vp, 5);
        QCOMPARE(a.dataParallel(), 8);
        QCOMPARE(a.training.microBatch, 2);
        QCOMPARE(a.training.recompute, Recompute::Full);
        QCOMPARE(a.training.optimizer.zeroStage, 2);
        QVERIFY(a.training.optimizer.distributed);
        QVERIFY(!a.training.optimizer.fsdp);
        QVERIFY(a.mapping.empty());
        QCOMPARE(a.cluster, l.cluster);
        // It survives a save and a load.
        const Layout back = parseLayout(layoutToText(a), "applied.railyard.json");
        QCOMPARE(back.parallel, a.parallel);
        QCOMPARE(back.training, a.training);
    }
};

QTEST_GUILESS_MAIN(TestPlanner)
#include "tst_planner.moc"
