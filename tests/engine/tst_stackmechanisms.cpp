#include "base/inputerror.h"
#include "base/jsoncursor.h"
#include "layout/catalog.h"
#include "layout/layout.h"
#include "layout/softwarestack.h"
#include "step/compute.h"
#include "step/evaluate.h"
#include "step/memory.h"
#include "step/stepcost.h"
#include "topology/topology.h"

#include "comparenear.h"
#include "evaluatelayouts.h"
#include "evaluatetext.h"
#include <QTest>

using namespace railyard::engine;
using namespace railyard::test;

// What the named software stacks run differently, each mechanism priced against another stack
// or setting on one layout: TP and its overlap, FSDP and ZeRO's gathers, context parallel,
// recomputation, Megatron-DeepSpeed's pipeline.
class TestStackMechanisms : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // A model that trains with dropout says how its attention dropout is priced: on Blackwell at
    // the kernel's measured share (and slower than without), elsewhere not priced; a model
    // without dropout says nothing about it.
    void attentionDropoutIsSaid()
    {
        Layout h100 = minimal(R"({"stack": "megatron-core"})", R"({"tp": 8, "pp": 8, "dp": 1})", 8);
        Layout b200 = h100;
        b200.cluster.gpu = "B200";
        Layout quiet = b200;
        quiet.model->dropout = false;
        const Evaluation h = run(h100), b = run(b200), q = run(quiet);
        QVERIFY2(h.ok && b.ok && q.ok, (h.error + b.error + q.error).c_str());
        QVERIFY(railyard::test::mentions(b,
                                         "attention dropout (the model trains with dropout): "
                                         "the attention kernel at 80% of its forward rate and "
                                         "56.5% of its backward"));
        QVERIFY(railyard::test::mentions(h,
                                         "attention dropout (the model trains with dropout): "
                                         "not priced on this GPU"));
        QVERIFY(!railyard::test::mentions(q, "attention dropout"));
        QVERIFY(b.stepTimeS > q.stepTimeS);
    }

    // Megatron-Core's memory as its code holds it: the loss saves only its FP32 softmax (4
    // bytes a logit; the generic stack's 8: FP32 logits and their gradient), and in FP8
    // Transformer Engine keeps each layer's FP8 weights through the step (a byte per
    // parameter of the GPU's share), except where the parameters are FP8 already
    // (fp8_param_gather) or the stack casts them again (torchtitan).
    void megatronCoreMemoryAsItsCodeHoldsIt()
    {
        const ModelDims m = *findModelPreset("gpt3-175b");
        const GpuSpec &h100 = *Catalog::builtin().gpu("H100-SXM");
        // The last of 8 stages of 12 layers at TP 8, as a stack sets it up.
        const auto last = [&](const StackProfile &stack, const TrainingConfig &t) {
            MemoryShape s;
            s.tp = 8;
            s.pp = 8;
            s.microBatches = 8;
            setStackMemory(s, stack, t, h100);
            return stageMemoryAt(m, t, s, layerActivations(m, t, s), 7, 12, 0);
        };
        const StackProfile &core = *findStack("megatron-core");
        TrainingConfig bf16;
        bf16.seqLen = 2048;
        bf16.microBatch = 1;
        const MemoryBreakdown coreBf16 = last(core, bf16);
        // The loss: 2048 tokens x 51,200 logits / TP 8, 4 bytes each where the generic stack
        // holds 8.
        RAILYARD_COMPARE_NEAR(last(genericStack(), bf16).activationsGiB - coreBf16.activationsGiB,
                              2048.0 * 51200 / 8 * 4 / double(1 << 30),
                              1e-9);
        TrainingConfig fp8 = bf16;
        fp8.precision = Precision::Fp8;
        // The stage's weights: BF16, plus a byte each in FP8.
        RAILYARD_COMPARE_NEAR(last(core, fp8).weightsGiB, coreBf16.weightsGiB * 1.5, 1e-9);
        TrainingConfig fp8Params = fp8;
        fp8Params.optimizer.fp8ParamGather = true;
        RAILYARD_COMPARE_NEAR(last(core, fp8Params).weightsGiB, coreBf16.weightsGiB, 1e-9);
        const StackProfile &titan = *findStack("torchtitan");
        RAILYARD_COMPARE_NEAR(last(titan, fp8).weightsGiB, last(titan, bf16).weightsGiB, 1e-9);
        // Ampere has no FP8 tensor cores: nothing is cast.
        MemoryShape a100;
        a100.tp = 8;
        setStackMemory(a100, core, fp8, *Catalog::builtin().gpu("A100-SXM-80GB"));
        QCOMPARE(a100.fp8WeightCacheBytes, 0.0);
        // The evaluation says so, and on Hopper what it leaves out.
        Layout b200 = minimal(R"({"stack": "megatron-core", "precision": "fp8"})",
                              R"({"tp": 8, "pp": 8, "dp": 1})",
                              8);
        b200.cluster.gpu = "B200";
        const Evaluation b = run(b200);
        QVERIFY2(b.ok, b.error.c_str());
        QVERIFY(b.memory.fp8WeightCopiesGiB > 0);
        QVERIFY(railyard::test::mentions(b, "FP8 weights kept through the step"));
        QVERIFY(!railyard::test::mentions(b, "transposed copy"));
        const Evaluation h = run(minimal(R"({"stack": "megatron-core", "precision": "fp8"})",
                                         R"({"tp": 8, "pp": 8, "dp": 1})",
                                         8));
        QVERIFY(railyard::test::mentions(h, "the transposed copy it also keeps on this GPU"));
        const Evaluation plain = run(minimal(R"({"stack": "megatron-core", "precision": "bf16"})",
                                             R"({"tp": 8, "pp": 8, "dp": 1})",
                                             8));
        QVERIFY(!railyard::test::mentions(plain, "FP8 weights kept"));
    }

    // training.stack sets documented defaults; keys written beside it win; an unknown name is
    // refused with the place and the choices.
    void namedStacks()
    {
        const Layout old = minimal(R"({"stack": "megatron-2021"})", R"({"tp": 8, "dp": 1})", 1);
        QCOMPARE(old.training.stack, std::string("megatron-2021"));
        QCOMPARE(old.training.attention, AttentionKernel::Materialized);
        QVERIFY(!old.training.overlap.dp);
        const Layout mixed = minimal(R"({"stack": "megatron-2021", "attention": "flash",
                                       "overlap": {"dp": true}})",
                                     R"({"tp": 8, "dp": 1})",
                                     1);
        QCOMPARE(mixed.training.attention, AttentionKernel::Flash);
        QVERIFY(mixed.training.overlap.dp);
        QVERIFY(!mixed.training.overlap.tp); // still the stack's
        const Layout core = minimal(R"({"stack": "megatron-core"})", R"({"tp": 8, "dp": 1})", 1);
        QVERIFY(core.training.overlap.tp);
        QVERIFY(core.training.optimizer.gradReduceFp32);
        // Megatron-FSDP reduces in BF16 (its recommended configuration); a key beside it wins.
        const Layout fsdp = minimal(R"({"stack": "megatron-core", "optimizer": {"fsdp": true}})",
                                    R"({"tp": 8, "dp": 1})",
                                    1);
        QVERIFY(!fsdp.training.optimizer.gradReduceFp32);
        const Layout fsdp32 = minimal(
                R"({"stack": "megatron-core", "optimizer": {"fsdp": true, "grad_reduce_fp32": true}})",
                R"({"tp": 8, "dp": 1})",
                1);
        QVERIFY(fsdp32.training.optimizer.gradReduceFp32);
        // Saved and read back, the stack stays.
        const Layout again = parseLayout(layoutToText(old), "again.railyard.json");
        QCOMPARE(again.training.stack, std::string("megatron-2021"));
        QVERIFY(again.sameContent(old));
        try {
            minimal(R"({"stack": "megatron-1999"})", R"({"tp": 8, "dp": 1})", 1);
            QFAIL("an unknown stack was accepted");
        } catch (const InputError &err) {
            const QString what = QString::fromUtf8(err.what());
            QVERIFY2(what.contains(QStringLiteral("/training/stack"))
                             && what.contains(QStringLiteral("megatron-core")),
                     err.what());
        }
        // The same run is slower on the 2021 stack (materialized attention, no DP overlap).
        Layout a = minimal(R"({"stack": "megatron-core", "seq_len": 2048, "global_batch": 64})",
                           R"({"tp": 8, "pp": 2, "dp": 2})",
                           4);
        Layout b = a;
        applyStackDefaults(b.training, *findStack("megatron-2021"));
        QVERIFY(run(b).stepTimeS > run(a).stepTimeS);
    }

    // The PyTorch FSDP stacks on one FSDP layout: both run FlashAttention-2 and PyTorch's own
    // norms; torchtitan (FSDP2) prefetches its backward gathers, Composer (FSDP1's
    // BACKWARD_POST) issues each after the gradients it should hide behind, so they wait.
    // Composer reduces gradients in BF16 (half torchtitan's FP32 reduce-scatter bytes) and is
    // still the slower one, by the waiting gathers. Their compute differs by the loss alone:
    // llm-foundry's fused cross-entropy over BF16 logits against torchtitan's FP32 one.
    void pytorchFsdpStacks()
    {
        const std::string parallel = R"({"tp": 1, "dp": 32})";
        // No recomputation: torchtitan's selective policy (every other matmul) is its own.
        const std::string training = R"("seq_len": 4096, "global_batch": 64, "micro_batch": 1,
                                         "recompute": "none",
                                         "optimizer": {"fsdp": true, "zero_stage": 3}})";
        Layout titan = minimal(R"({"stack": "torchtitan", )" + training, parallel, 4);
        Layout composer = minimal(R"({"stack": "composer", )" + training, parallel, 4);
        titan.model->preset = composer.model->preset = "llama3-8b";
        QVERIFY(titan.training.optimizer.gradReduceFp32);
        QVERIFY(!composer.training.optimizer.gradReduceFp32);
        const Evaluation t = run(titan), c = run(composer);
        QVERIFY2(t.ok && c.ok, (t.error + c.error).c_str());
        qInfo("llama3-8b FSDP on 32 H100: torchtitan step %.3f s (exposed DP %.3f), composer "
              "%.3f s (exposed DP %.3f)",
              t.stepTimeS,
              t.exposed.dp,
              c.stepTimeS,
              c.exposed.dp);
        // Two micro-batches, each with one loss over 4,096 x 128,256 logits: FP32 kernels move
        // 36 bytes a logit at PyTorch's eager rates, the fused kernel 6 at HBM's.
        const double lossGap = t.exposed.compute - c.exposed.compute;
        qInfo("compute: torchtitan %.4f s, composer %.4f s", t.exposed.compute, c.exposed.compute);
        QVERIFY(lossGap > 0.005 && lossGap < 0.05 * t.exposed.compute);
        QVERIFY(c.exposed.dp > t.exposed.dp);
        QVERIFY(c.stepTimeS > t.stepTimeS);
    }

    // PyTorch's async TP (torchtitan's overlap.tp) fuses the forward's collectives with their
    // matmuls but not the backward's input-gradient reduce-scatters, whose input is a sum of
    // GEMMs (pytorch#149946): two of a layer's six reduce-scatters (full recomputation) stay
    // exposed where Transformer Engine's ring exchange hides them.
    // Megatron's MoE layers with sequence parallelism and expert TP 1 send each TP rank's own
    // sequence shard to the experts (the dispatchers' expert-TP group has one rank;
    // token_dispatcher.py, core_v0.15.0): only the attention block gathers and scatters over
    // TP, half of a dense layer's traffic. Shared experts run as a TP-split MLP and bring the
    // other half back, and so does expert TP 2 (priced as the dense layer's, as before).
    void moeLayersGatherOverTpForAttentionOnly()
    {
        const auto tpSeconds = [](int etp, int shared) {
            const std::string text = R"({"format": "railyard-layout", "version": 1,
                "cluster": {"gpu": "H100-SXM", "nodes": 2, "gpus_per_node": 8},
                "model": {"preset": "qwen3-30b-a3b", "moe": {"shared_experts": )"
                                     + std::to_string(shared) + R"(}},
                "training": {"stack": "megatron-core", "seq_len": 4096, "global_batch": 64,
                             "micro_batch": 1, "overlap": {"tp": false}},
                "parallel": {"tp": 2, "ep": 4, "etp": )"
                                     + std::to_string(etp) + R"(, "dp": 8}})";
            const Evaluation e = run(parseLayout(text, "moe-tp.railyard.json"));
            return e.ok ? e.total.tp : -1.0;
        };
        const double attentionOnly = tpSeconds(1, 0), expertTp = tpSeconds(2, 0),
                     shared = tpSeconds(1, 1);
        qInfo("qwen3-30b-a3b TP 2, TP seconds a step: expert TP 1 %.3f, expert TP 2 %.3f, "
              "with a shared expert %.3f",
              attentionOnly,
              expertTp,
              shared);
        QVERIFY(attentionOnly > 0 && expertTp > 0 && shared > 0);
        RAILYARD_COMPARE_NEAR(attentionOnly, expertTp / 2, 0.01);
        RAILYARD_COMPARE_NEAR(shared, expertTp, 0.01);
    }

    void asyncTpLeavesBackwardReduceScattersExposed()
    {
        QVERIFY(!findStack("torchtitan")->tpOverlapBackwardReduceScatter);
        QVERIFY(findStack("megatron-core")->tpOverlapBackwardReduceScatter);
        const std::string parallel = R"({"tp": 8, "dp": 4})";
        const auto layout = [&](const char *stack, bool overlap) {
            const std::string training = std::string("{\"stack\": \"") + stack
                                         + "\", \"seq_len\": 8192, \"global_batch\": 32, "
                                           "\"micro_batch\": 2, \"recompute\": \"full\", "
                                           "\"overlap\": {\"tp\": "
                                         + (overlap ? "true" : "false") + "}}";
            Layout l = minimal(training, parallel, 4);
            l.model->preset = "llama3-70b";
            return l;
        };
        const Evaluation titanSync = run(layout("torchtitan", false));
        const Evaluation titanAsync = run(layout("torchtitan", true));
        const Evaluation coreSync = run(layout("megatron-core", false));
        const Evaluation coreAsync = run(layout("megatron-core", true));
        for (const Evaluation *e : {&titanSync, &titanAsync, &coreSync, &coreAsync})
            QVERIFY2(e->ok, e->error.c_str());
        qInfo("llama3-70b TP 8 on 32 H100, exposed TP: torchtitan %.3f s, async %.3f s; "
              "megatron-core %.3f s, overlapped %.3f s",
              titanSync.exposed.tp,
              titanAsync.exposed.tp,
              coreSync.exposed.tp,
              coreAsync.exposed.tp);
        // Six all-gathers and six reduce-scatters a layer, of about the same time: the two
        // unfused ones are a sixth of the traffic. The rest hides less than in the ring
        // exchange, whose backward collectives have the data- and weight-gradient GEMMs beside
        // them where PyTorch's have the data gradient's only.
        const double unfused = titanSync.exposed.tp / 6;
        QVERIFY(titanAsync.exposed.tp >= 0.95 * unfused);
        QVERIFY(titanAsync.exposed.tp - unfused > coreAsync.exposed.tp * 5 / 6);
        QVERIFY(titanAsync.exposed.tp - unfused < 0.5 * (titanSync.exposed.tp - unfused));
        QVERIFY(coreAsync.exposed.tp < 0.6 * titanAsync.exposed.tp);
        RAILYARD_COMPARE_NEAR(titanSync.exposed.tp, coreSync.exposed.tp, 0.02);
        // The assumptions say how each overlaps.
        QVERIFY(mentions(titanAsync, "beside its own GEMM"));
        QVERIFY(mentions(titanAsync, "input-gradient reduce-scatters are not overlapped"));
        QVERIFY(mentions(titanAsync, "23-43%"));
        QVERIFY(mentions(coreAsync, "beside its own GEMM"));
        QVERIFY(!mentions(coreAsync, "23-43%"));
        QVERIFY(!mentions(coreSync, "beside its own GEMM"));
    }

    // TP overlap hides each collective behind its own GEMM: an attention block whose output
    // projection is short leaves its reduce-scatter exposed however long the MLP's GEMMs are
    // (the pooled rule hid it behind them).
    void tpOverlapHidesEachCollectiveBehindItsOwnGemm()
    {
        LayerTimes l;
        l.tpOps = 4; // attention's input and output projections, the MLP's
        l.tpOpGemmForward = {1e-3, 0.2e-3, 10e-3, 5e-3};
        StepComm c;
        c.tpAgS = c.tpRsS = 1e-3;
        c.tpPerLayerS = 8e-3; // four collectives forward, four backward
        const int tp = 8;
        const auto exposed = [](double comm, double gemm) {
            return comm / 8 + std::max(0.0, comm - gemm) * 7 / 8;
        };
        // Forward, each beside its GEMM; backward, beside the data and weight gradients (2x).
        const double forward = exposed(1e-3, 1e-3) + exposed(1e-3, 0.2e-3) + exposed(1e-3, 10e-3)
                               + exposed(1e-3, 5e-3);
        const double backward = exposed(1e-3, 2e-3) + exposed(1e-3, 0.4e-3) + exposed(1e-3, 20e-3)
                                + exposed(1e-3, 10e-3);
        RAILYARD_COMPARE_NEAR(overlappedTpPerLayer(l, c, tp, 1.0, 2.0), forward + backward, 1e-9);
        QVERIFY(forward + backward > 2 * c.tpPerLayerS / tp); // the pooled rule's 1 ms
        // A straggler's GEMMs take longer and hide more.
        QVERIFY(overlappedTpPerLayer(l, c, tp, 2.0, 2.0) < forward + backward);
        // Recomputation runs the forward's collectives again.
        c.tpRecomputeShare = 1;
        RAILYARD_COMPARE_NEAR(overlappedTpPerLayer(l, c, tp, 1.0, 2.0),
                              2 * forward + backward,
                              1e-9);
        c.tpRecomputeShare = 0;
        // PyTorch's async TP: the input-gradient reduce-scatters wait whole, the other backward
        // collectives have the data gradient only beside them.
        c.tpUnfusedPerLayerS = 2e-3;
        const double pytorchBackward = 2e-3 + exposed(1e-3, 0.2e-3) + exposed(1e-3, 5e-3);
        RAILYARD_COMPARE_NEAR(overlappedTpPerLayer(l, c, tp, 1.0, 2.0),
                              forward + pytorchBackward,
                              1e-9);
        // A MoE layer whose experts are split over TP: their block's collectives wait.
        c.tpUnfusedPerLayerS = 0;
        LayerTimes attentionOnly = l;
        attentionOnly.tpOps = 2;
        const double attention = exposed(1e-3, 1e-3) + exposed(1e-3, 0.2e-3) + exposed(1e-3, 2e-3)
                                 + exposed(1e-3, 0.4e-3);
        RAILYARD_COMPARE_NEAR(overlappedTpPerLayer(attentionOnly, c, tp, 1.0, 2.0),
                              attention + 4e-3,
                              1e-9);
    }

    // FP8 training gathers TP in FP8: Transformer Engine quantizes before the sequence-parallel
    // all-gathers (the norm's output forward, the output's gradient backward) and torchao's
    // float8 tensor parallelism (torchtitan) casts before them alike; the reduce-scatters move
    // BF16. In BF16 both move two bytes a value.
    void fp8TrainingGathersTpInFp8()
    {
        QVERIFY(findStack("torchtitan")->tpFloat8AllGather);
        QVERIFY(findStack("megatron-core")->tpFloat8AllGather);
        const auto layout = [](const char *stack, const char *precision) {
            const std::string training = std::string("{\"stack\": \"") + stack
                                         + "\", \"seq_len\": 8192, \"global_batch\": 32, "
                                           "\"micro_batch\": 2, \"recompute\": \"full\", "
                                           "\"precision\": \""
                                         + precision + "\"}";
            Layout l = minimal(training, R"({"tp": 8, "dp": 4})", 4);
            l.model->preset = "llama3-70b";
            return l;
        };
        const Evaluation titan8 = run(layout("torchtitan", "fp8"));
        const Evaluation titan16 = run(layout("torchtitan", "bf16"));
        const Evaluation core8 = run(layout("megatron-core", "fp8"));
        const Evaluation core16 = run(layout("megatron-core", "bf16"));
        for (const Evaluation *e : {&titan8, &titan16, &core8, &core16})
            QVERIFY2(e->ok, e->error.c_str());
        const double titan = titan8.total.tp / titan16.total.tp;
        const double core = core8.total.tp / core16.total.tp;
        qInfo("llama3-70b TP 8, TP traffic fp8 / bf16: torchtitan %.3f, megatron-core %.3f",
              titan,
              core);
        // Full recomputation. torchtitan: six all-gathers and six reduce-scatters a layer of one
        // size, so halving the gathers' bytes takes the traffic to about 3/4 (a little above:
        // each collective's latency stays). Megatron: eight all-gathers (the weight gradients'
        // two besides) and six reduce-scatters, about 1 - 8/14/2 = 0.71.
        QVERIFY2(titan > 0.74 && titan < 0.80, qPrintable(QString::number(titan)));
        QVERIFY2(core > 0.70 && core < 0.76, qPrintable(QString::number(core)));
    }

    // FSDP reducing FP32 gradients (torchtitan) prices its reduce-scatters as the parameter
    // gathers scaled to twice the bytes; every DP group of TP 8 x DP 4 on four servers is
    // placed alike, so none is warned "slower than the others" (each was, at +98%, with a
    // negative cost: the fastest group's time was not scaled with the others').
    void fp32FsdpGradientsWarnNoPlacement()
    {
        const std::string training = R"({"stack": "torchtitan", "seq_len": 8192,
            "global_batch": 32, "micro_batch": 1, "recompute": "full",
            "optimizer": {"fsdp": true, "zero_stage": 3}})";
        Layout l = minimal(training, R"({"tp": 8, "dp": 4})", 4);
        l.model->preset = "llama3-70b";
        QVERIFY(l.training.optimizer.gradReduceFp32);
        const Evaluation e = run(l);
        QVERIFY2(e.ok, e.error.c_str());
        for (const Warning &w : e.warnings) {
            QVERIFY2(w.code != "dp-placement", w.message.c_str());
            QVERIFY2(w.costS >= 0, (w.code + ": " + w.message).c_str());
        }
    }

    // PyTorch's context parallel (torchtitan): keys and values expanded to the query heads,
    // all-gathered once a pass and hidden only by the diagonal step's attention; backward, the
    // FP32 gradients sent at every step, the last with nothing beside it. Across two servers
    // (TP 8 inside each, CP 2 between them) it moves and exposes far more than Transformer
    // Engine's ring at the model's key-value heads.
    void torchContextParallelGathersExpandedKv()
    {
        QVERIFY(findStack("torchtitan")->torchContextParallel);
        QVERIFY(!findStack("megatron-core")->torchContextParallel);
        const auto layout = [](const char *stack) {
            const std::string training = std::string("{\"stack\": \"") + stack
                                         + "\", \"seq_len\": 65536, \"global_batch\": 4, "
                                           "\"micro_batch\": 1, \"recompute\": \"full\"}";
            Layout l = minimal(training, R"({"tp": 8, "cp": 2, "dp": 1})", 2);
            l.model->preset = "llama3-8b";
            return l;
        };
        const Evaluation titan = run(layout("torchtitan"));
        const Evaluation core = run(layout("megatron-core"));
        QVERIFY2(titan.ok && core.ok, (titan.error + core.error).c_str());
        qInfo("llama3-8b CP 2 x TP 8 on 2 H100 servers, CP traffic / exposed: torchtitan "
              "%.3f / %.3f s, megatron-core %.3f / %.3f s",
              titan.total.cp,
              titan.exposed.cp,
              core.total.cp,
              core.exposed.cp);
        // Per layer and micro-batch, bytes each GPU receives: three gathers (forward,
        // recomputed, backward) of the other rank's expanded keys and values (4x the 8 key-value
        // heads' 4 per GPU) and two FP32 gradient sends (2 x 4x): 28 where the ring moves 3.
        const double ratio = titan.total.cp / core.total.cp;
        QVERIFY2(ratio > 28.0 / 3 * 0.75 && ratio < 28.0 / 3 * 1.25,
                 qPrintable(QString::number(ratio)));
        // The last of the backward's two gradient sends (2 of the 7 units) waits.
        QVERIFY(titan.exposed.cp >= 0.9 * titan.total.cp * 2 / 7);
        QVERIFY(core.exposed.cp < 0.1 * titan.exposed.cp);
    }

    // Megatron's recompute modules (training.recompute_modules) on an MoE layout: each module
    // frees what it recomputes and costs its forward again. The whole MoE layer ("moe") frees
    // the most, runs the experts' GEMMs and the dispatch's two all-to-alls again (six a layer
    // instead of four: the EP time x1.5 exactly, as under full recomputation); the norms and the experts' activation free
    // less and cost element-wise passes only; core_attn (Megatron's default) costs the attention
    // kernel again and, with flash attention, frees nothing.
    void recomputeModulesPriceWhatTheyRerun()
    {
        Layout l = readLayoutFile(RAILYARD_TEST_DATA "/../../layouts/moe-h200-ib.railyard.json");
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        const auto priced = [&](Recompute r, unsigned modules) {
            Layout x = l;
            x.training.recompute = r;
            x.training.recomputeModules = modules;
            return evaluateOk(x, t);
        };
        const Evaluation none = priced(Recompute::None, 0);
        const Evaluation attn = priced(Recompute::Selective, kRecomputeCoreAttn);
        const Evaluation light = priced(Recompute::Selective,
                                        kRecomputeLayernorm | kRecomputeMoeAct);
        const Evaluation moe = priced(Recompute::Selective, kRecomputeLayernorm | kRecomputeMoe);
        const Evaluation full = priced(Recompute::Full, 0);
        QVERIFY(none.total.ep > 0);
        RAILYARD_COMPARE_NEAR(moe.total.ep, 1.5 * none.total.ep, 1e-9 * none.total.ep);
        // Full recomputation reruns the checkpointed layer's dispatcher too.
        RAILYARD_COMPARE_NEAR(full.total.ep, 1.5 * none.total.ep, 1e-9 * none.total.ep);
        QCOMPARE(light.total.ep, none.total.ep);
        // Memory: none > core_attn (flash keeps no scores: equal) > light > moe > full.
        QCOMPARE(attn.memory.activationsGiB, none.memory.activationsGiB);
        QVERIFY(light.memory.activationsGiB < none.memory.activationsGiB);
        QVERIFY(moe.memory.activationsGiB < light.memory.activationsGiB);
        QVERIFY(full.memory.activationsGiB < moe.memory.activationsGiB);
        // Compute: each reruns its part; the MoE layer costs more than the norms and the
        // activation, less than the whole layer.
        QVERIFY(attn.total.compute > none.total.compute);
        QVERIFY(light.total.compute > none.total.compute);
        QVERIFY(moe.total.compute > light.total.compute);
        QVERIFY(full.total.compute > moe.total.compute);
        // The assumptions say what is rerun and how the routing is priced.
        const auto says = [](const Evaluation &e, const std::string &text) {
            return std::any_of(e.assumptions.begin(),
                               e.assumptions.end(),
                               [&](const std::string &a) {
                                   return a.find(text) != std::string::npos;
                               });
        };
        QVERIFY(says(moe, "selective recomputation reruns layernorm+moe in the backward pass"));
        QVERIFY(!says(attn, "selective recomputation reruns"));
        QCOMPARE(says(none, "dropless MoE routing"), !l.training.moeForceBalance);
        Layout forced = l;
        forced.training.moeForceBalance = true;
        QVERIFY(says(evaluate(forced, t), "MoE routing forced to balance"));
        qInfo("Mixtral-class MoE on H200: activations %.1f (none) / %.1f (core_attn) / %.1f "
              "(layernorm+moe_act) / %.1f (layernorm+moe) / %.1f GiB (full); compute %.2f / %.2f "
              "/ %.2f / %.2f / %.2f s; EP %.2f / %.2f s",
              none.memory.activationsGiB,
              attn.memory.activationsGiB,
              light.memory.activationsGiB,
              moe.memory.activationsGiB,
              full.memory.activationsGiB,
              none.total.compute,
              attn.total.compute,
              light.total.compute,
              moe.total.compute,
              full.total.compute,
              none.total.ep,
              moe.total.ep);
    }

    // Full recomputation of some of the layers (training.recompute_layers, Megatron's block
    // method): half of Llama 3 8B's 32 layers recompute, so the compute is midway between none
    // and all of them (the recomputed forward is the only difference), and the activations
    // held sit between the two. With selective recomputation the count changes nothing.
    void blockRecomputeSitsBetween()
    {
        Layout l = readLayoutFile(RAILYARD_TEST_DATA
                                  "/../../layouts/hgx-h100-server.railyard.json");
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        const auto priced = [&](Recompute r, int layers) {
            Layout x = l;
            x.training.recompute = r;
            x.training.recomputeLayers = layers;
            return evaluateOk(x, t);
        };
        const Evaluation none = priced(Recompute::None, 0), all = priced(Recompute::Full, 0),
                         half = priced(Recompute::Full, 16), more = priced(Recompute::Full, 99);
        RAILYARD_COMPARE_NEAR(half.total.compute,
                              (none.total.compute + all.total.compute) / 2,
                              1e-9 * all.total.compute);
        QCOMPARE(more.total.compute, all.total.compute); // at most every layer
        QVERIFY(none.memory.activationsGiB > half.memory.activationsGiB);
        QVERIFY(half.memory.activationsGiB > all.memory.activationsGiB);
        QCOMPARE(priced(Recompute::Selective, 16).stepTimeS,
                 priced(Recompute::Selective, 0).stepTimeS);
        Layout x = l;
        x.training.recompute = Recompute::Full;
        x.training.recomputeLayers = 16;
        QCOMPARE(parseLayout(layoutToJson(x).dump(), "x.railyard.json").training.recomputeLayers,
                 16);
        qInfo("Llama 3 8B on 8 H100: compute %.3f s (none), %.3f s (16 of 32 layers), %.3f s "
              "(all); activations %.1f / %.1f / %.1f GiB",
              none.total.compute,
              half.total.compute,
              all.total.compute,
              none.memory.activationsGiB,
              half.memory.activationsGiB,
              all.memory.activationsGiB);
    }

    // Hybrid sharding (optimizer.shard_group): FSDP shards within each server and replicates
    // across the two; the gathers and reduce-scatters stay on NVLink and only each shard's
    // gradient all-reduce crosses the network; the sharded state per GPU doubles (16 ranks ->
    // 8). Checked against the same layout fully sharded, and the bad values said.
    // Hopper's GEMMs are persistent (one CTA per SM): beside the FSDP gathers and
    // reduce-scatters, whose kernels hold SMs, each runs a second wave and takes twice as long.
    // The same H100 priced as if its GEMMs ran in waves (Ampere's) shows the cost alone: half
    // the GEMMs' share of the collectives' hidden time, in the DP part; none without overlap.
    void overlapSlowsPersistentGemms()
    {
        Layout l = readLayoutFile(RAILYARD_TEST_DATA "/../../layouts/zero3-scaling.railyard.json");
        l.training.stack = "pytorch-fsdp";
        l.training.optimizer.fsdp = true;
        Catalog waves = Catalog::builtin();
        GpuSpec g = *waves.gpu("H100-SXM");
        g.architecture = "ampere";
        waves.setGpu(g);
        const auto both = [&](const Layout &layout) {
            const Evaluation p = evaluate(layout, buildTopology(layout.cluster, Catalog::builtin()));
            const Evaluation w = evaluate(layout, buildTopology(layout.cluster, waves));
            if (!p.ok || !w.ok)
                qFatal("%s%s", p.error.c_str(), w.error.c_str());
            return std::pair{p, w};
        };
        const auto [persistent, inWaves] = both(l);
        QCOMPARE(persistent.exposed.compute, inWaves.exposed.compute);
        const double hidden = inWaves.total.dp - inWaves.exposed.dp;
        const double added = persistent.exposed.dp - inWaves.exposed.dp;
        qInfo("step %.3f s (GEMMs in waves %.3f s): %.3f s of collectives hidden, %.3f s added",
              persistent.stepTimeS,
              inWaves.stepTimeS,
              hidden,
              added);
        QVERIFY2(hidden > 0.1 * inWaves.stepTimeS, qPrintable(QString::number(hidden)));
        // A dense Llama layer at this size spends 60-90% of its time in GEMMs.
        QVERIFY2(added > 0.3 * hidden && added < 0.45 * hidden,
                 qPrintable(QStringLiteral("%1 s added for %2 s hidden").arg(added).arg(hidden)));
        RAILYARD_COMPARE_NEAR(persistent.stepTimeS - inWaves.stepTimeS, added, 1e-3 * added);
        // Nothing hidden, nothing added.
        l.training.overlap.dp = false;
        const auto [serialP, serialW] = both(l);
        QCOMPARE(serialP.stepTimeS, serialW.stepTimeS);
    }

    // Megatron-DeepSpeed's pipeline (DeepSpeed 0.5-0.7 PipelineEngine): each TP rank sends a
    // TP-th of the activation and the receiver all-gathers it over NVLink; the four transfers of
    // a micro-batch run one after another; the BF16 gradients go into FP32 accumulators after
    // every micro-batch's backward.
    void megatronDeepspeedPipeline()
    {
        Layout l = readLayoutFile(RAILYARD_TEST_DATA
                                  "/../../layouts/pipeline-bubble.railyard.json");
        l.parallel.sequenceParallel = false; // Megatron-DeepSpeed 2021-2022
        l.training.overlap.pp = false;
        l.training.overlap.tp = false;
        l.cluster.tuning.nvls = false; // rings, whose all-reduce moves twice a reduce-scatter
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        const auto priced = [&](const char *stack, int tp, int globalBatch) {
            Layout x = l;
            x.training.stack = stack;
            x.parallel.tp = tp;
            x.parallel.dp = 8 / tp;
            x.training.globalBatch = globalBatch;
            return evaluateOk(x, t);
        };
        const auto networkBytes = [&](const Evaluation &e) {
            double sum = 0;
            for (std::size_t i = 0; i < e.links->size(); ++i) {
                const LinkKind k = t.links()[i].kind;
                if (k == LinkKind::Ib || k == LinkKind::Ethernet)
                    sum += double(e.links->bytesUp[i]) + e.links->bytesDown[i];
            }
            return sum;
        };
        // TP 8 in a server, PP 4 across servers, DP 1: the network carries only the pipeline.
        const Evaluation megatron = priced("megatron-2021", 8, 8);
        const Evaluation ds = priced("megatron-deepspeed", 8, 8);
        QVERIFY(networkBytes(megatron) > 0);
        RAILYARD_COMPARE_NEAR(networkBytes(ds) / networkBytes(megatron), 1.0 / 8, 1e-6);
        // TP 1: nothing to split or gather, the same sends, one after another: twice as long.
        // DeepSpeed's pipeline refuses ZeRO-2 and ZeRO-3: priced, and said.
        QVERIFY(!railyard::test::findWarning(ds, "pipeline-zero"));
        {
            Layout z = l;
            z.training.stack = "megatron-deepspeed";
            z.training.optimizer.zeroStage = 2;
            const Evaluation e = evaluate(z, t);
            QVERIFY(e.ok);
            const auto *w = railyard::test::findWarning(e, "pipeline-zero");
            QVERIFY(w);
            QVERIFY(w->message.find("megatron-deepspeed refuses ZeRO-2") != std::string::npos);
            z.parallel.pp = 1;
            z.parallel.dp = 4;
            QVERIFY(!railyard::test::findWarning(evaluate(z, t), "pipeline-zero"));
        }
        const Evaluation megatron1 = priced("megatron-2021", 1, 8);
        const Evaluation ds1 = priced("megatron-deepspeed", 1, 8);
        QVERIFY(megatron1.total.ppP2p > 0);
        RAILYARD_COMPARE_NEAR(ds1.total.ppP2p / megatron1.total.ppP2p, 2.0, 1e-9);
        // The FP32 accumulation: 10 bytes per parameter of the largest stage (Llama 2 13B: ten
        // layers of 4 x 5120^2 + 3 x 5120 x 13824 parameters and the 32000 x 5120 embedding,
        // over TP 8) through HBM at the catalog's rate, once per micro-batch.
        const GpuSpec &h100 = *Catalog::builtin().gpu("H100-SXM");
        const double params = (10.0 * (4.0 * 5120 * 5120 + 3.0 * 5120 * 13824) + 32000.0 * 5120)
                              / 8;
        const double perMicroBatch = 10 * params / (h100.hbmTBPerS * 1e12 * h100.memoryEfficiency);
        const Evaluation ds16 = priced("megatron-deepspeed", 8, 16);
        const Evaluation megatron16 = priced("megatron-2021", 8, 16);
        const double added8 = ds.exposed.compute - megatron.exposed.compute;
        const double added16 = ds16.exposed.compute - megatron16.exposed.compute;
        qInfo("FP32 accumulation: %.2f ms a micro-batch (%.2f ms expected), p2p %.3f -> %.3f s",
              1e3 * added8 / 8,
              1e3 * perMicroBatch,
              megatron.total.ppP2p,
              ds.total.ppP2p);
        RAILYARD_COMPARE_NEAR(added8 / 8, perMicroBatch, 0.01 * perMicroBatch);
        RAILYARD_COMPARE_NEAR(added16, 2 * added8, 1e-6 * added16);
        // The sharded optimizer's gradients all-reduced, then the parameters gathered: three
        // halves of a reduce-scatter and a gather's bytes (DP 8 at TP 1).
        QVERIFY(megatron1.total.dp > 0);
        const double dpRatio = ds1.total.dp / megatron1.total.dp;
        QVERIFY2(dpRatio > 1.4 && dpRatio < 1.6, qPrintable(QString::number(dpRatio)));
    }

    void hybridShardingKeepsGathersInTheServer()
    {
        Layout full = readLayoutFile(RAILYARD_TEST_DATA
                                     "/../../layouts/zero3-scaling.railyard.json");
        full.training.stack = "pytorch-fsdp";
        full.training.optimizer.fsdp = true;
        Layout hybrid = full;
        hybrid.training.optimizer.shardGroup = 8;
        const Topology t = buildTopology(full.cluster, Catalog::builtin());
        const Evaluation a = evaluate(full, t), b = evaluate(hybrid, t);
        QVERIFY2(a.ok && b.ok, (a.error + b.error).c_str());
        const auto bytesOn = [&](const Evaluation &e, bool network) {
            double sum = 0;
            for (std::size_t i = 0; i < e.links->size(); ++i) {
                const LinkKind k = t.links()[i].kind;
                if ((k == LinkKind::Ib || k == LinkKind::Ethernet) == network)
                    sum += double(e.links->bytesUp[i]) + e.links->bytesDown[i];
            }
            return sum;
        };
        // Fully sharded, each micro-batch's two gathers and one reduce-scatter run in rings over
        // 16 GPUs that cross between the servers twice: 3 x 2 x 15/16 of the parameters'
        // bytes on the network. Hybrid, the eight all-reduces (one per shard, between the two
        // GPUs holding it) each send and receive their eighth: 2 x the gradients' bytes. So
        // 2 / (6 x 15/16) = 0.36 of the bytes, and none of the gathers.
        const double netFull = bytesOn(a, true), netHybrid = bytesOn(b, true);
        QVERIFY2(netHybrid > 0.3 * netFull && netHybrid < 0.4 * netFull,
                 qPrintable(QStringLiteral("%1 of %2 GB").arg(netHybrid / 1e9).arg(netFull / 1e9)));
        // The state sharded 8 ways, not 16: weights (beyond the two gathered layers),
        // gradients and optimizer state per GPU double.
        const double ratio = b.memory.optimizerGiB / a.memory.optimizerGiB;
        QVERIFY2(std::abs(ratio - 2.0) < 1e-6, qPrintable(QString::number(ratio)));
        RAILYARD_COMPARE_NEAR(b.memory.gradientsGiB / a.memory.gradientsGiB, 2.0, 1e-6);
        // On the timeline the gathers stay on NVLink and the gradient reduction carries the
        // all-reduce's network bytes.
        int gathers = 0;
        bool reduceOnNetwork = false;
        for (const Phase &p : b.timeline.phases) {
            if (p.kind != PhaseKind::Dp || p.pattern < 0)
                continue;
            const bool gather = p.name.find("gather") != std::string::npos;
            gathers += gather;
            for (const LinkShare &l : b.timeline.patterns[std::size_t(p.pattern)].links) {
                const bool network = t.links()[std::size_t(l.link)].kind == LinkKind::Ib;
                QVERIFY2(!(gather && network), p.name.c_str());
                reduceOnNetwork = reduceOnNetwork || (!gather && network);
            }
        }
        QVERIFY(gathers > 0);
        QVERIFY(reduceOnNetwork);
        qInfo("zero3-scaling under pytorch-fsdp: full shard %.3f s, %.1f GB on the network; "
              "hybrid (8) %.3f s, %.1f GB; %.1f / %.1f GiB per GPU",
              a.stepTimeS,
              netFull / 1e9,
              b.stepTimeS,
              netHybrid / 1e9,
              a.memory.totalGiB(),
              b.memory.totalGiB());

        // Bad values: a group that does not divide DP x CP, one without sharded weights, and
        // an MoE model's.
        Layout bad = hybrid;
        bad.training.optimizer.shardGroup = 3;
        Evaluation e = evaluate(bad, t);
        QVERIFY(!e.ok);
        QCOMPARE(e.error,
                 std::string("training: optimizer.shard_group 3 does not divide DP x CP "
                             "= 16"));
        bad = hybrid;
        bad.training.optimizer.fsdp = false;
        bad.training.optimizer.zeroStage = 1;
        e = evaluate(bad, t);
        QVERIFY(!e.ok);
        QVERIFY2(e.error.find("needs FSDP or ZeRO-3") != std::string::npos, e.error.c_str());
        bad = hybrid;
        bad.model = ModelConfig{};
        bad.model->preset = "mixtral-8x7b";
        e = evaluate(bad, t);
        QVERIFY(!e.ok);
        QVERIFY2(e.error.find("MoE") != std::string::npos, e.error.c_str());
        // Written and read back.
        const Layout back = parseLayout(layoutToJson(hybrid).dump(), "hsdp.railyard.json");
        QCOMPARE(back.training.optimizer.shardGroup, 8);
        QVERIFY(layoutToJson(full).dump().find("shard_group") == std::string::npos);
    }

    // torchtitan under PP keeps each stage's FSDP parameters gathered through the step and
    // reduce-scatters the accumulated gradients once (StackProfile::fsdpPipelineHoldsUnsharded):
    // per step, one gather and one reduce-scatter of the stage's layers, whatever the
    // micro-batches; without PP, or with a stack that reshards (composer), every micro-batch
    // gathers twice (forward, backward) and reduces once.
    void fsdpPipelineGathersOncePerStep()
    {
        ModelConfig mc;
        mc.preset = "llama3-8b";
        const ModelDims m = resolveModel(mc).dims;
        const ModelDims::LayerParams lp = m.layerParams();
        const double layer = lp.attention + lp.denseMlp; // one block, TP 1
        const auto traffic = [&](const char *stack, int pp, int micro) {
            TrainingConfig t;
            t.seqLen = 8192;
            t.microBatch = 1;
            t.optimizer.fsdp = true;
            applyStackDefaults(t, *findStack(stack));
            StepSetting s;
            s.model = &m;
            s.training = &t;
            s.stack = findStack(stack);
            s.pp = pp;
            s.dp = 8;
            s.micro = micro;
            std::array<StageRun, 16> runs{};
            const int n = stageRuns(m, pp, runs);
            StepComm c;
            requestStepComm(s, runs.data(), n, c);
            std::pair<double, double> bytes; // all-gathered, reduce-scattered per step
            for (int i = 0; i < c.requests; ++i) {
                const CommRequest &r = c.request[static_cast<std::size_t>(i)];
                if (r.slot == CommSlot::DpAg)
                    bytes.first += r.bytes * r.perStep;
                if (r.slot == CommSlot::DpRs)
                    bytes.second += r.bytes * r.perStep;
            }
            return bytes;
        };
        QVERIFY(findStack("torchtitan")->fsdpPipelineHoldsUnsharded);
        QVERIFY(!findStack("composer")->fsdpPipelineHoldsUnsharded);
        const double stageLayers = m.layers / 4.0; // 32 layers over 4 stages
        // torchtitan, PP 4, 8 micro-batches: BF16 gathers and FP32 reductions of 8 layers, once.
        const auto held = traffic("torchtitan", 4, 8);
        RAILYARD_COMPARE_NEAR(held.first, stageLayers * layer * 2.0, 1e-9);
        RAILYARD_COMPARE_NEAR(held.second, stageLayers * layer * 4.0, 1e-9);
        QCOMPARE(traffic("torchtitan", 4, 1), held);
        // Without PP each micro-batch gathers every layer twice and reduces it once.
        const auto flat = traffic("torchtitan", 1, 8);
        RAILYARD_COMPARE_NEAR(flat.first, 8 * m.layers * layer * 2.0 * 2.0, 1e-9);
        RAILYARD_COMPARE_NEAR(flat.second, 8 * m.layers * layer * 4.0, 1e-9);
        // A stack that reshards (FSDP1 in Composer, BF16 gradients) does so under PP too.
        const auto composer = traffic("composer", 4, 8);
        RAILYARD_COMPARE_NEAR(composer.first, 8 * stageLayers * layer * 2.0 * 2.0, 1e-9);
        RAILYARD_COMPARE_NEAR(composer.second, 8 * stageLayers * layer * 2.0, 1e-9);
        // What that costs in memory: the stage's parameters (BF16) and gradients (FP32)
        // unsharded, where the resharding stack holds two gathered layers.
        TrainingConfig t;
        t.seqLen = 8192;
        t.microBatch = 1;
        t.optimizer.fsdp = true;
        applyStackDefaults(t, *findStack("torchtitan"));
        MemoryShape shape;
        shape.pp = 4;
        shape.dp = 8;
        shape.microBatches = 8;
        const LayerActivations act = layerActivations(m, t, shape);
        const MemoryBreakdown resharded = stageMemoryAt(m, t, shape, act, 1, stageLayers, 0);
        shape.fsdpHoldsUnsharded = true;
        const MemoryBreakdown holding = stageMemoryAt(m, t, shape, act, 1, stageLayers, 0);
        const double gib = 1024.0 * 1024.0 * 1024.0;
        RAILYARD_COMPARE_NEAR(holding.weightsGiB - resharded.weightsGiB,
                              (stageLayers - 2) * layer * 2.0 / gib,
                              1e-9);
        RAILYARD_COMPARE_NEAR(holding.gradientsGiB - resharded.gradientsGiB,
                              stageLayers * layer * 4.0 / gib,
                              1e-9);
    }

    // torchtitan's selective recomputation (activation_checkpoint 'selective', option 'op'):
    // a block keeps its input and the outputs of Q, V, the attention kernel, w1 and w2, and
    // recomputes K, the output projection and w3 (and the element-wise kernels) in the backward.
    void torchtitanSelectiveRecompute()
    {
        QVERIFY(findStack("torchtitan")->selectiveEveryOtherMatmul);
        QVERIFY(!findStack("megatron-core")->selectiveEveryOtherMatmul);
        ModelConfig mc;
        mc.preset = "llama3-8b";
        const ModelDims m = resolveModel(mc).dims;
        TrainingConfig t;
        t.seqLen = 8192;
        t.microBatch = 2;
        t.recompute = Recompute::Selective;
        applyStackDefaults(t, *findStack("torchtitan"));
        MemoryShape shape;
        shape.selectiveEveryOtherMatmul = true;
        const double T = 2 * 8192.0, h = 4096, hq = 4096, hkv = 1024, f = 14336;
        RAILYARD_COMPARE_NEAR(layerActivationBytes(m, t, shape, false),
                              T * (2 * h + 2 * hq + 2 * hkv + 2 * hq + 2 * f + 2 * h),
                              1e-12);
        // Korthikanti's selective recomputation keeps much more (every activation but the
        // scores, which flash attention never stores).
        shape.selectiveEveryOtherMatmul = false;
        QVERIFY(layerActivationBytes(m, t, shape, false) > 2 * T * (4 * h + 4 * hq + 2 * f));
        // The recomputed matmuls' FLOPs: 2 T (h hkv + hq h + h f) more than no recomputation.
        const GpuSpec &gpu = *Catalog::builtin().gpu("H100-SXM");
        const ComputeModel cm(gpu, Precision::Bf16);
        LayerShard shard;
        shard.tp = 1;
        shard.sequenceParallel = false;
        shard.microBatch = 2;
        shard.seqLen = 8192;
        shard.attention = AttentionKernel::FlashAttention2;
        shard.recompute = Recompute::None;
        const LayerTimes none = layerTimes(m, false, shard, cm);
        shard.recompute = Recompute::Selective;
        shard.selectiveEveryOtherMatmul = true;
        const LayerTimes op = layerTimes(m, false, shard, cm);
        RAILYARD_COMPARE_NEAR(op.hardwareFlops - none.hardwareFlops,
                              2 * T * (h * hkv + hq * h + h * f),
                              1e-9);
        QCOMPARE(op.forward, none.forward);
        QVERIFY(op.backward > none.backward);
        // Its loss holds the BF16 logits beside their FP32 copy and log-softmax's output: 10
        // bytes per logit on the last stage where the generic stack holds 8.
        QCOMPARE(findStack("torchtitan")->lossBytesPerLogit, 10.0);
        QCOMPARE(genericStack().lossBytesPerLogit, 8.0);
        const LayerActivations act = layerActivations(m, t, shape);
        const MemoryBreakdown eight = stageMemoryAt(m, t, shape, act, 0, m.layers, 0);
        shape.lossBytesPerLogit = 10;
        const MemoryBreakdown ten = stageMemoryAt(m, t, shape, act, 0, m.layers, 0);
        RAILYARD_COMPARE_NEAR(ten.activationsGiB - eight.activationsGiB,
                              T * 128256 * 2.0 / (1024.0 * 1024.0 * 1024.0),
                              1e-9);
    }
};

QTEST_APPLESS_MAIN(TestStackMechanisms)
#include "tst_stackmechanisms.moc"
