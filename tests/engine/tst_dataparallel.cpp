#include "base/inputerror.h"
#include "layout/catalog.h"
#include "layout/layout.h"
#include "layout/softwarestack.h"
#include "layout/transformer.h"
#include "step/evaluate.h"
#include "step/stepcost.h"
#include "topology/topology.h"

#include <QTest>

#include <array>

using namespace railyard::engine;

namespace {

Layout layout(const std::string &training)
{
    const std::string text
            = R"({"format": "railyard-layout", "version": 1,
        "cluster": {"gpu": "H100-SXM", "nodes": 64, "gpus_per_node": 8},
        "model": {"preset": "gpt3-175b"}, "training": )"
              + training
              + R"(, "parallel": {"tp": 4, "pp": 8, "dp": 16, "sequence_parallel": true}})";
    return parseLayout(text, "test.railyard.json");
}

void expectError(const std::string &training, const QString &place, const QString &what)
{
    try {
        layout(training);
        QFAIL(qPrintable("accepted: " + QString::fromStdString(training)));
    } catch (const InputError &e) {
        const QString msg = QString::fromStdString(e.what());
        QVERIFY2(msg.contains(place) && msg.contains(what), qPrintable(msg));
    }
}

// The dense parameter all-gathers of the first pipeline stage (the largest: it holds the
// embedding) of gpt3-175b at TP 4, PP 8, DP 16, one bucket per 1e9 parameters.
struct Gathers
{
    double bytesPerOp = 0, ops = 0;
};
Gathers firstStageGathers(bool fp8Gather, const std::string &precision)
{
    const Layout l = layout(R"({"stack": "nemo", "precision": ")" + precision
                            + R"(", "optimizer": {"distributed": true, "bucket_params": 1e9,
                                  "fp8_param_gather": )"
                            + (fp8Gather ? "true" : "false") + "}}");
    const ModelDims m = resolveModel(*l.model).dims;
    StepSetting s;
    s.model = &m;
    s.training = &l.training;
    s.stack = findStack(l.training.stack);
    s.tp = 4;
    s.pp = 8;
    s.dp = 16;
    s.sp = true;
    s.micro = 8;
    s.fp8Weights = fp8ParamGathers(l.training, *Catalog::builtin().gpu("H100-SXM"));
    std::array<StageRun, 16> runs;
    const int n = stageRuns(m, s.pp, runs);
    StepComm c;
    requestStepComm(s, runs.data(), n, c);
    Gathers g;
    g.ops = c.dpOps;
    for (int i = 0; i < c.requests; ++i)
        if (c.request[static_cast<std::size_t>(i)].slot == CommSlot::DpAg)
            g.bytesPerOp = c.request[static_cast<std::size_t>(i)].bytes;
    return g;
}

} // namespace

class TestDataParallel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // training.optimizer.fp8_param_gather: read, written back only when true, refused with its
    // place when not a bool; bucket_params likewise (a positive parameter count).
    void layoutKeys()
    {
        const Layout on = layout(R"({"precision": "fp8", "optimizer": {"fp8_param_gather": true,
                                                                       "bucket_params": 104857600}})");
        QVERIFY(on.training.optimizer.fp8ParamGather);
        QCOMPARE(on.training.optimizer.bucketParams, 104857600.0);
        const std::string text = layoutToText(on);
        QVERIFY(text.find("\"fp8_param_gather\": true") != std::string::npos);
        const Layout again = parseLayout(text, "again.railyard.json");
        QVERIFY(again.training.optimizer.fp8ParamGather);
        QCOMPARE(again.training.optimizer.bucketParams, 104857600.0);
        QVERIFY(again.sameContent(on));

        Layout off = on;
        off.training.optimizer.fp8ParamGather = false;
        off.training.optimizer.bucketParams = 0;
        const std::string offText = layoutToText(off);
        QVERIFY(offText.find("fp8_param_gather") == std::string::npos);
        QVERIFY(offText.find("bucket_params") == std::string::npos);
        QVERIFY(!parseLayout(offText, "off.railyard.json").training.optimizer.fp8ParamGather);

        expectError(R"({"optimizer": {"fp8_param_gather": "yes"}})",
                    "/training/optimizer/fp8_param_gather",
                    "expected true or false, got a string \"yes\"");
        expectError(R"({"optimizer": {"bucket_params": 0}})",
                    "/training/optimizer/bucket_params",
                    "expected a number from 1000 to 1e+12, got 0");
    }

    // With BF16 training the key changes nothing and the evaluation says why.
    void fp8GatherNeedsFp8()
    {
        const Layout bf16 = layout(R"({"precision": "bf16", "seq_len": 2048, "global_batch": 128,
                                       "optimizer": {"fp8_param_gather": true}})");
        Layout plain = bf16;
        plain.training.optimizer.fp8ParamGather = false;
        const Topology t = buildTopology(bf16.cluster, Catalog::builtin());
        const Evaluation a = evaluate(bf16, t), b = evaluate(plain, t);
        QVERIFY2(a.ok && b.ok, (a.error + b.error).c_str());
        QCOMPARE(a.stepTimeS, b.stepTimeS);
        bool warned = false;
        for (const Warning &w : a.warnings)
            if (w.code == "fp8-param-gather-bf16") {
                warned = true;
                QVERIFY2(w.message.find("training.optimizer.fp8_param_gather") != std::string::npos
                                 && w.message.find("bf16") != std::string::npos,
                         w.message.c_str());
            }
        QVERIFY(warned);
        for (const Warning &w : b.warnings)
            QVERIFY(w.code != "fp8-param-gather-bf16");
    }

    // FP8 parameter gathers move one byte per linear-layer weight and keep the embedding in
    // BF16. gpt3-175b (h 12288, 96 layers of 12 h^2 linear weights, vocab 51200), TP 4 PP 8:
    // the first stage holds 12 layers, 12 x 12 x 12288^2 / 4 = 5,435,817,984 linear weights per
    // GPU, and the embedding, 51200 x 12288 / 4 = 157,286,400. At 1e9 parameters a bucket:
    // ceil(5,593,104,384 / 1e9) = 6 gathers a step.
    void fp8GatherBytes()
    {
        const Gathers bf16 = firstStageGathers(false, "fp8");
        const Gathers fp8 = firstStageGathers(true, "fp8");
        const Gathers bf16Training = firstStageGathers(true, "bf16");
        QCOMPARE(bf16.ops, 6.0);
        QCOMPARE(fp8.ops, 6.0);
        // BF16: (5,435,817,984 + 157,286,400) x 2 B / 6 = 1,864,368,128 B a gather.
        QCOMPARE(bf16.bytesPerOp, 1864368128.0);
        // FP8: (5,435,817,984 x 1 + 157,286,400 x 2) B / 6 = 958,398,464 B a gather: the linear
        // weights' bytes halve, the embedding's stay.
        QCOMPARE(fp8.bytesPerOp, 958398464.0);
        // Training in BF16, the key does nothing.
        QCOMPARE(bf16Training.bytesPerOp, 1864368128.0);
    }

    // Parameters per DP bucket: Megatron-Core's max(40M, 1M x DP), NeMo's apex
    // DistributedFusedAdam at bucket_cap_mb 125 with BF16 gradients, the layout's own value
    // over either, and one bucket for the stacks that reduce after the backward.
    void bucketRule()
    {
        const OptimizerConfig none;
        const StackProfile &core = *findStack("megatron-core");
        QCOMPARE(dpBucketParams(core, none, 48), 48e6);
        QCOMPARE(dpBucketParams(core, none, 8), 40e6);
        QCOMPARE(dpBucketParams(core, none, 448), 448e6);
        QCOMPARE(dpBucketParams(*findStack("nemo"), none, 448), 65536000.0); // 125 MiB / 2 B
        QCOMPARE(dpBucketParams(*findStack("megatron-2021"), none, 48), 0.0);
        QCOMPARE(dpBucketParams(genericStack(), none, 448), 40e6);
        OptimizerConfig own;
        own.bucketParams = 104857600; // MLPerf v4.0 GPT-3: BUCKET_CAP_MB=200, BF16 gradients
        QCOMPARE(dpBucketParams(core, own, 48), 104857600.0);
        QCOMPARE(dpBucketParams(*findStack("nemo"), own, 448), 104857600.0);
    }
};

QTEST_APPLESS_MAIN(TestDataParallel)
#include "tst_dataparallel.moc"
