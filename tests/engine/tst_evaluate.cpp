#include "layout/catalog.h"
#include "layout/layout.h"
#include "layout/softwarestack.h"
#include "report/report.h"
#include "step/evaluate.h"
#include "step/evaluationdiff.h"
#include "step/fidelity.h"
#include "step/memory.h"
#include "step/stackrange.h"
#include "topology/topology.h"

#include "comparenear.h"
#include "evaluatelayouts.h"
#include "evaluatetext.h"
#include <QTest>

#include <sstream>

using namespace railyard::engine;
using namespace railyard::test;

// The evaluation as a whole: what it reports, the configurations it refuses or warns about,
// memory, the band, re-evaluation. What each software stack's mechanisms price is in
// tst_stackmechanisms.
class TestEvaluate : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // MFU is against the dense BF16 peak, FP8 runs too (as Llama 3 and NVIDIA's tables count
    // it), so an FP8 run can pass 100%; its share of the FP8 peak is said beside it.
    void fp8RunsAlsoSayTheirShareOfTheFp8Peak()
    {
        const std::string parallel = R"({"tp": 8, "pp": 8, "dp": 2})";
        const Evaluation bf16 = run(
                minimal(R"({"seq_len": 2048, "global_batch": 256, "precision": "bf16"})",
                        parallel,
                        16));
        const Evaluation fp8 = run(
                minimal(R"({"seq_len": 2048, "global_batch": 256, "precision": "fp8"})",
                        parallel,
                        16));
        QVERIFY(bf16.ok && fp8.ok);
        QCOMPARE(bf16.mfuOfFp8Peak, 0.0);
        // H100: 989 dense BF16 TFLOP/s, 1,979 FP8.
        RAILYARD_COMPARE_NEAR(fp8.mfuOfFp8Peak, fp8.mfu * 989.0 / 1979.0, 1e-3);
        QVERIFY(fp8.flopConvention.find("of the dense FP8 peak") != std::string::npos);
        QVERIFY(bf16.flopConvention.find("FP8") == std::string::npos);
        const Topology t = buildTopology(minimal("{}", parallel, 16).cluster, Catalog::builtin());
        std::ostringstream text;
        writeEvaluationText(text, fp8, t, {});
        QVERIFY2(text.str().find("% of the FP8 peak)") != std::string::npos, text.str().c_str());
    }

    void referenceExample()
    {
        const Evaluation e = run(example());
        QVERIFY2(e.ok, e.error.c_str());
        // The breakdown adds up to the step; throughput follows from tokens and time.
        RAILYARD_COMPARE_NEAR(e.exposed.sum(), e.stepTimeS, 1e-9);
        QCOMPARE(e.tokensPerStep, 256.0 * 8192);
        RAILYARD_COMPARE_ABS(e.tokensPerSPerGpu * 128 * e.stepTimeS, e.tokensPerStep, 1e-3);
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
        RAILYARD_COMPARE_ABS(peak, 1.0f, 1e-3f);
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

    // Korthikanti et al. 2022, section 4: activation bytes per layer and micro-batch for a GPT
    // layer (with dropout, materialized attention): sbh(10 + 24/t + 5as/(ht)) with TP t,
    // sbh/t (34 + 5as/h) with sequence parallelism, 34sbh/t with selective recomputation too,
    // 2sbh/t (the layer input) with full recomputation.
    void activationMemoryMatchesKorthikanti_data()
    {
        QTest::addColumn<int>("tp");
        QTest::addColumn<bool>("sp");
        QTest::addColumn<int>("recompute");
        QTest::newRow("TP1") << 1 << false << int(Recompute::None);
        QTest::newRow("TP8") << 8 << false << int(Recompute::None);
        QTest::newRow("TP8 SP") << 8 << true << int(Recompute::None);
        QTest::newRow("TP8 SP selective") << 8 << true << int(Recompute::Selective);
        QTest::newRow("TP8 SP full") << 8 << true << int(Recompute::Full);
    }

    void activationMemoryMatchesKorthikanti()
    {
        QFETCH(int, tp);
        QFETCH(bool, sp);
        QFETCH(int, recompute);
        const ModelDims m = *findModelPreset("gpt3-175b");
        TrainingConfig t;
        t.seqLen = 2048;
        t.microBatch = 1;
        t.attention = AttentionKernel::Materialized;
        t.recompute = Recompute(recompute);
        MemoryShape shape;
        shape.tp = tp;
        shape.sequenceParallel = sp;
        const double s = t.seqLen, b = t.microBatch, h = m.hidden, a = m.heads;
        double expected = 0;
        if (t.recompute == Recompute::Full)
            expected = 2 * s * b * h / (sp ? tp : 1);
        else if (sp)
            expected = s * b * h / tp * (34 + (t.recompute == Recompute::None ? 5 * a * s / h : 0));
        else
            expected = s * b * h * (10 + 24.0 / tp + 5 * a * s / (h * tp));
        const double got = layerActivationBytes(m, t, shape, false);
        qInfo("%s: %.1f MiB per layer (Korthikanti: %.1f MiB)",
              QTest::currentDataTag(),
              got / 1048576,
              expected / 1048576);
        RAILYARD_COMPARE_NEAR(got, expected, 1e-9);
        // Flash attention keeps no scores: without recomputation it saves the 5as/h term.
        TrainingConfig kept = t;
        kept.recompute = Recompute::None;
        TrainingConfig flash = kept;
        flash.attention = AttentionKernel::Flash;
        const double scores = 5 * a * s * s * b / tp;
        QVERIFY(std::abs(layerActivationBytes(m, kept, shape, false)
                         - layerActivationBytes(m, flash, shape, false) - scores)
                < 1e-6 * scores);
    }

    // The first pipeline stage holds PP micro-batches in 1F1B and PP (1 + (PP - 1)/(PP VP)) with
    // the interleaved schedule (Korthikanti et al. 2022, section 4.2.3); the last holds one in
    // 1F1B.
    void inFlightMicroBatches()
    {
        MemoryShape s;
        s.pp = 16;
        s.microBatches = 64;
        QCOMPARE(railyard::engine::inFlightMicroBatches(s, 0), 16.0);
        QCOMPARE(railyard::engine::inFlightMicroBatches(s, 15), 1.0);
        s.vp = 4;
        QCOMPARE(railyard::engine::inFlightMicroBatches(s, 0), 16.0 * (1 + 15.0 / (16 * 4)));
        s.microBatches = 8; // fewer micro-batches than the warm-up would take
        QCOMPARE(railyard::engine::inFlightMicroBatches(s, 0), 8.0);
    }

    // Model states per parameter (Rajbhandari et al. 2020, ZeRO): 16 bytes replicated; ZeRO-1
    // 4 + 12/N; ZeRO-2 2 + 14/N; ZeRO-3 16/N (plus a layer being computed and one prefetched).
    void zeroModelStates_data()
    {
        QTest::addColumn<int>("stage");
        QTest::addColumn<double>("bytesPerParam");
        const double n = 64;
        QTest::newRow("DDP") << 0 << 16.0;
        QTest::newRow("ZeRO-1") << 1 << 4 + 12 / n;
        QTest::newRow("ZeRO-2") << 2 << 2 + 14 / n;
        QTest::newRow("ZeRO-3") << 3 << 16 / n;
    }

    void zeroModelStates()
    {
        QFETCH(int, stage);
        QFETCH(double, bytesPerParam);
        const ModelDims m = *findModelPreset("gpt3-175b");
        TrainingConfig t;
        t.optimizer.distributed = stage > 0;
        t.optimizer.zeroStage = stage;
        MemoryShape shape;
        shape.dp = 64;
        shape.stageDense = {m.layers};
        shape.stageMoe = {0};
        const MemoryBreakdown mb = stageMemory(m, t, shape).front();
        double states = mb.weightsGiB + mb.gradientsGiB + mb.optimizerGiB;
        const double params = m.totalParams() - double(m.vocab) * m.hidden; // tied embedding
        if (stage == 3) // the working set: two layers gathered in full
            states -= 2 * 2 * (m.attentionParamsPerLayer() + m.mlpParamsPerLayer(m.ffn)) / kGiB;
        RAILYARD_COMPARE_NEAR(states * kGiB / params, bytesPerParam, 0.01);
    }

    // An 80 GB H100 exposes about 79.6 GiB to programs, not 80e9 bytes = 74.5 GiB.
    void usableHbm()
    {
        const GpuSpec &h100 = *Catalog::builtin().gpu("H100-SXM");
        RAILYARD_COMPARE_ABS(usableHbmGiB(h100), 79.6, 0.05);
        GpuSpec custom = h100;
        custom.hbmUsableGiB = 0;
        RAILYARD_COMPARE_ABS(usableHbmGiB(custom), 80e9 / kGiB, 0.01);
    }

    // Configurations that really ran fit: Nemotron-4 340B FP8 on 128 H100 (NeMo 24.07), Llama 3
    // 70B FP8 on 64 (Megatron-Bridge 25.11), GPT-3 175B on 512 (MLPerf Training v4.0).
    void publishedRunsFit_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<int>("nodes");
        QTest::addColumn<int>("seq");
        QTest::addColumn<int>("gbs");
        QTest::addColumn<int>("mbs");
        QTest::addColumn<int>("tp");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("vp");
        QTest::newRow("F8 Nemotron-4 340B")
                << "nemotron4-340b" << 16 << 4096 << 32 << 1 << 8 << 8 << 12;
        QTest::newRow("G3 Llama 3 70B") << "llama3-70b" << 8 << 8192 << 128 << 1 << 4 << 8 << 5;
        QTest::newRow("K1 GPT-3 175B") << "gpt3-175b" << 64 << 2048 << 2304 << 2 << 4 << 8 << 4;
    }

    void publishedRunsFit()
    {
        QFETCH(QString, preset);
        QFETCH(int, nodes);
        QFETCH(int, seq);
        QFETCH(int, gbs);
        QFETCH(int, mbs);
        QFETCH(int, tp);
        QFETCH(int, pp);
        QFETCH(int, vp);
        Layout l;
        l.cluster.nodes = nodes;
        ModelConfig mc;
        mc.preset = preset.toStdString();
        l.model = mc;
        applyStackDefaults(l.training, *findStack("nemo"));
        l.training.seqLen = seq;
        l.training.globalBatch = gbs;
        l.training.microBatch = mbs;
        l.training.precision = Precision::Fp8;
        l.training.recompute = Recompute::None;
        l.parallel.tp = tp;
        l.parallel.pp = pp;
        l.parallel.vp = vp;
        const Evaluation e = run(l);
        QVERIFY2(e.ok, e.error.c_str());
        qInfo("%s: %.1f GiB of %.1f (weights %.1f, gradients %.1f, optimizer %.1f, activations "
              "%.1f, other %.1f)",
              QTest::currentDataTag(),
              e.memory.totalGiB(),
              e.hbmGiB,
              e.memory.weightsGiB,
              e.memory.gradientsGiB,
              e.memory.optimizerGiB,
              e.memory.activationsGiB,
              e.memory.otherGiB);
        QVERIFY(!hasWarning(e, "out-of-memory"));
        QVERIFY(e.memory.totalGiB() > 0.6 * e.hbmGiB); // and not by a wide margin
    }

    // Every evaluation carries a band from the validation residuals of its regime, and says
    // what it rests on; a GPU with no validation runs gets a wider one.
    void uncertaintyBand()
    {
        const Evaluation e = run(example());
        QVERIFY(e.ok);
        const StepTimeBand &b = e.stepTimeBand;
        QVERIFY(b.fraction >= 0.05 && b.fraction < 0.5);
        QVERIFY(b.lowS < e.stepTimeS && e.stepTimeS < b.highS);
        RAILYARD_COMPARE_ABS((b.highS - b.lowS) / 2, b.fraction * e.stepTimeS, 1e-9);
        bool said = false;
        for (const std::string &a : e.assumptions)
            said = said || a.find("step time band") != std::string::npos;
        QVERIFY(said);
        QVERIFY(validationRuns().size() >= 60);

        // The fallback from specific to general regimes, on a made-up residual set.
        std::vector<ValidationRun> runs;
        for (int i = 0; i < 6; ++i)
            runs.push_back({"h" + std::to_string(i),
                            "hopper",
                            "bf16",
                            64,
                            false,
                            false,
                            false,
                            false,
                            0.02 * (i + 1)});
        for (int i = 0; i < 6; ++i)
            runs.push_back({"a" + std::to_string(i),
                            "ampere",
                            "bf16",
                            64,
                            false,
                            false,
                            false,
                            false,
                            0.1 * (i + 1)});
        Regime hopper{"hopper", "bf16", 64, false, false, false};
        const UncertaintyBand hb = railyard::engine::uncertaintyBand(hopper, runs);
        QCOMPARE(hb.runs, 6);
        // The 80% conformal band of 2..12%, the ceil(7 x 0.8) = 6th smallest of 6, widened by
        // a fifth for a configuration no source measured.
        RAILYARD_COMPARE_ABS(hb.fraction, 0.144, 1e-9);
        Regime blackwell{"blackwell", "bf16", 64, false, false, false};
        const UncertaintyBand bb = railyard::engine::uncertaintyBand(blackwell, runs);
        QCOMPARE(bb.runs, 12);
        QVERIFY(bb.fraction > hb.fraction);
        QVERIFY(bb.basis.find("widened") != std::string::npos);

        // Under five runs of a kind, their largest |error| (their conformal quantile) x 1.2
        // bounds the band from below: two Blackwell runs 70% and 30% off widen the band all 14
        // give (the ceil(15 x 0.8) = 12th smallest, 0.5, x 1.2 = 0.6) to 0.7 x 1.2 = 0.84.
        std::vector<ValidationRun> withFew = runs;
        withFew.push_back({"b0", "blackwell", "bf16", 64, false, false, false, false, -0.70});
        withFew.push_back({"b1", "blackwell", "bf16", 64, false, false, false, false, 0.30});
        const UncertaintyBand few = railyard::engine::uncertaintyBand(blackwell, withFew);
        QCOMPARE(few.runs, 14);
        RAILYARD_COMPARE_ABS(few.fraction, 0.84, 1e-9);
        QVERIFY2(few.basis.find("widened to the 2 published runs most like it (Blackwell bf16, "
                                "up to 256 GPUs), off by up to 70%")
                         != std::string::npos,
                 few.basis.c_str());
        QVERIFY2(few.basis.find("widened by half") == std::string::npos, few.basis.c_str());
        // Runs of the kind that the broader band already holds leave it as it is.
        withFew.resize(runs.size());
        withFew.push_back({"b0", "blackwell", "bf16", 64, false, false, false, false, 0.05});
        const UncertaintyBand held = railyard::engine::uncertaintyBand(blackwell, withFew);
        RAILYARD_COMPARE_ABS(held.fraction, 1.2 * 0.5, 1e-9); // 13 runs: the 12th smallest
        QVERIFY(held.basis.find("most like it") == std::string::npos);
        // A MoE configuration where the kind has no MoE run: widened by half, and said so.
        Regime moe = blackwell;
        moe.moe = true;
        const UncertaintyBand m = railyard::engine::uncertaintyBand(moe, withFew);
        QVERIFY2(m.basis.find("no published run on Blackwell with MoE to check against")
                         != std::string::npos,
                 m.basis.c_str());
        // The runs of the configuration's own stack widen the band to what they missed by
        // (1.2 x their conformal quantile), and never narrow it.
        std::vector<ValidationRun> stacked;
        for (int i = 0; i < 10; ++i) {
            ValidationRun r = runs[0];
            r.error = i < 9 ? 0.02 * (i + 1) : -0.30; // the 9th smallest of 10: 0.18
            r.stack = i == 0 || i == 9 ? "s" : "t";
            stacked.push_back(r);
        }
        Regime ownStack = hopper;
        const double kindBand = 1.2 * 0.18;
        RAILYARD_COMPARE_ABS(railyard::engine::uncertaintyBand(ownStack, stacked).fraction,
                             kindBand,
                             1e-9);
        ownStack.stack = "s"; // 2% and 30% off: their conformal quantile is the largest
        const UncertaintyBand own = railyard::engine::uncertaintyBand(ownStack, stacked);
        RAILYARD_COMPARE_ABS(own.fraction, 1.2 * 0.30, 1e-9);
        QVERIFY2(own.basis.find("widened to the 2 published runs priced with s")
                         != std::string::npos,
                 own.basis.c_str());
        ownStack.stack = "t"; // 4-18%: the 8th smallest of 8, inside the kind's band
        const UncertaintyBand inside = railyard::engine::uncertaintyBand(ownStack, stacked);
        RAILYARD_COMPARE_ABS(inside.fraction, kindBand, 1e-9);
        QVERIFY(inside.basis.find("priced with") == std::string::npos);
        ownStack.stack = "u"; // no run of its own
        RAILYARD_COMPARE_ABS(railyard::engine::uncertaintyBand(ownStack, stacked).fraction,
                             kindBand,
                             1e-9);
    }

    // Bands from the published runs as the shipped Blackwell layouts get them (family W): a
    // dense layout's band comes from dense runs, not from the B200 MoE runs priced up to 3.4x
    // fast (the GB300 BF16 layout was ±147% while MoE and dense were mixed at the precision's
    // level); MoE keeps MoE's, and a band past 100% stops its low side at zero.
    void blackwellBandsKeepMoeAndDenseApart()
    {
        const auto priced = [](const char *name) {
            const Layout l = readLayoutFile(std::string(RAILYARD_TEST_DATA "/../../layouts/")
                                            + name);
            const Topology t = buildTopology(l.cluster, Catalog::builtin());
            return evaluate(l, t);
        };
        const Evaluation dense = priced("qp-tuning-gb300-qps4.railyard.json");
        QVERIFY(dense.ok);
        QVERIFY2(dense.stepTimeBand.basis.find("dense") != std::string::npos,
                 dense.stepTimeBand.basis.c_str());
        QVERIFY2(dense.stepTimeBand.fraction < 0.6, dense.stepTimeBand.basis.c_str());
        const Evaluation moe = priced("moe-gb200-nvl72.railyard.json");
        QVERIFY(moe.ok);
        QVERIFY2(moe.stepTimeBand.basis.find("MoE") != std::string::npos,
                 moe.stepTimeBand.basis.c_str());
        QVERIFY(moe.stepTimeBand.fraction > dense.stepTimeBand.fraction);
        const StepTimeBand &b = moe.stepTimeBand;
        QVERIFY(b.lowS >= 0);
        QCOMPARE(b.lowS, moe.stepTimeS * std::max(0.0, 1 - b.fraction));
        QCOMPARE(b.highS, moe.stepTimeS * (1 + b.fraction));
    }

    // A layout that names no stack: priced as each stack it may be running would run it, the
    // band widened to hold the fastest and the slowest, and said so. ZeRO-3 moves most with
    // the stack (zero3-scaling: 16 H100, ZeRO-3).
    void unnamedStackWidensTheBand()
    {
        const Layout l = readLayoutFile(RAILYARD_TEST_DATA
                                        "/../../layouts/zero3-scaling.railyard.json");
        QVERIFY(l.training.stack.empty());
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        EvaluateOptions on;
        on.stackRange = true;
        const Evaluation plain = evaluate(l, t);
        const Evaluation e = evaluate(l, t, on);
        QVERIFY(plain.ok && e.ok);
        QCOMPARE(plain.stackRange.stacks, 0);
        QCOMPARE(e.stepTimeS, plain.stepTimeS);
        // Hopper: the six current stacks; Ampere all ten (the four of 2021-2022 too).
        const auto candidates = candidateStacks("hopper");
        QCOMPARE(candidates.size(), std::size_t(6));
        QCOMPARE(candidateStacks("ampere").size(), std::size_t(10));
        double fastest = 1e30, slowest = 0;
        for (const StackProfile *p : candidates) {
            QVERIFY(!p->preHopper && !p->id.empty());
            Layout as = l;
            applyStackDefaults(as.training, *p);
            const double s = evaluate(as, t).stepTimeS;
            fastest = std::min(fastest, s);
            slowest = std::max(slowest, s);
        }
        QCOMPARE(e.stackRange.stacks, 6);
        RAILYARD_COMPARE_NEAR(e.stackRange.fastestS, fastest, 1e-9);
        RAILYARD_COMPARE_NEAR(e.stackRange.slowestS, slowest, 1e-9);
        qInfo("zero3-scaling: generic %.3f s, band %.3f-%.3f s unnamed; stacks %.3f s (%s) to "
              "%.3f s (%s); band %.3f-%.3f s (±%.0f%%)",
              plain.stepTimeS,
              plain.stepTimeBand.lowS,
              plain.stepTimeBand.highS,
              e.stackRange.fastestS,
              e.stackRange.fastest.c_str(),
              e.stackRange.slowestS,
              e.stackRange.slowest.c_str(),
              e.stepTimeBand.lowS,
              e.stepTimeBand.highS,
              100 * e.stepTimeBand.fraction);
        // The stacks reach past the validation band here, so it widens to hold them.
        QVERIFY(slowest > plain.stepTimeBand.highS);
        QVERIFY(e.stepTimeBand.lowS <= fastest && e.stepTimeBand.highS >= slowest);
        QCOMPARE(e.stepTimeBand.highS, slowest);
        RAILYARD_COMPARE_NEAR(e.stepTimeBand.fraction,
                              std::max(e.stepTimeS - e.stepTimeBand.lowS,
                                       e.stepTimeBand.highS - e.stepTimeS)
                                      / e.stepTimeS,
                              1e-12);
        QVERIFY(e.stepTimeBand.basis.find("no software stack named") != std::string::npos);
        QVERIFY(hasWarning(e, "no-stack"));
        bool said = false;
        for (const std::string &a : e.assumptions)
            said = said
                   || (a.rfind("step time band", 0) == 0
                       && a.find("no software stack named") != std::string::npos);
        QVERIFY(said);
        // A named stack is priced as that stack: no range, the validation band alone.
        Layout named = l;
        applyStackDefaults(named.training, *findStack("megatron-core"));
        const Evaluation n = evaluate(named, t, on);
        QCOMPARE(n.stackRange.stacks, 0);
        QVERIFY(!hasWarning(n, "no-stack"));
        QVERIFY(n.stepTimeBand.basis.find("no software stack") == std::string::npos);
    }

    // The shipped Llama 3.1 405B layout is the Llama 3 paper's 16,384-GPU configuration: it
    // fits, and lands within 10% of the published 400 TFLOP/s per GPU.
    void llama405bPreset()
    {
        const Layout l = readLayoutFile(RAILYARD_TEST_DATA
                                        "/../../layouts/llama3.1-405b-16k-h100.railyard.json");
        QCOMPARE(l.cluster.gpuCount(), 16384);
        QCOMPARE(l.parallel.tp, 8);
        QCOMPARE(l.parallel.pp, 16);
        QCOMPARE(l.dataParallel(), 128);
        const Evaluation e = run(l);
        QVERIFY2(e.ok, e.error.c_str());
        qInfo("Llama 3.1 405B, 16,384 H100: %.0f TFLOP/s per GPU (published 400), %.1f GiB of "
              "%.1f",
              e.modelTflopsPerGpu,
              e.memory.totalGiB(),
              e.hbmGiB);
        QVERIFY(!hasWarning(e, "out-of-memory"));
        RAILYARD_COMPARE_NEAR(e.modelTflopsPerGpu, 400, 0.10);
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
        RAILYARD_COMPARE_NEAR(again.stepTimeS, expected.stepTimeS, 1e-12);
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
            // Priced for its numbers alone in the same workspace (no step totals kept): the
            // same numbers, and the next evaluation's link loads are whole again.
            const Evaluation numbers = evaluate(l,
                                                t,
                                                workspace,
                                                {.linkLoads = false, .timeline = false});
            QVERIFY(!numbers.links);
            QCOMPARE(numbers.stepTimeS, own.stepTimeS);
            QCOMPARE(numbers.tokensPerSPerGpu, own.tokensPerSPerGpu);
            QCOMPARE(numbers.warnings.size(), own.warnings.size());
            QCOMPARE(numbers.assumptions, own.assumptions);
            // Again on the same topology, and on a copy of it: the rates read for this build
            // are kept and still right.
            const Topology copy = t;
            QCOMPARE(copy.buildId(), t.buildId());
            const Evaluation again = evaluate(l, copy, workspace);
            QCOMPARE(again.stepTimeS, own.stepTimeS);
            QCOMPARE(again.links->utilization, own.links->utilization);
            QCOMPARE(again.links->bytesUp, own.links->bytesUp);
            QCOMPARE(again.links->peakUtilization, own.links->peakUtilization);
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
