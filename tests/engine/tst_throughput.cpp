#include "evaluate.h"
#include "layout.h"
#include "topology.h"

#include <QTest>

using namespace railyard::engine;

namespace {

// One published run: the system, the model and how it was trained, and what was measured.
struct Run
{
    const char *id;
    // System
    const char *gpu;
    int gpus;
    double nicGbit; // per GPU
    FabricKind fabric;
    // Model (a preset, or GPT-style dimensions for the Megatron papers' models)
    const char *preset;
    int layers, hidden, heads; // used when preset is empty: ffn 4h, vocab 51200, plain MLP
    // Training
    int seq, globalBatch, microBatch;
    int tp, pp, vp, dp, cp, ep;
    bool distributed, fsdp;
    Recompute recompute;
    bool sequenceParallel;
    Precision precision;
    bool overlapTp, overlapDp, overlapEp;
    // Measured: step seconds, or tokens/s/GPU (one of them)
    double stepS;
    double tokensPerGpu;
    AttentionKernel attention; // flash, or materialized (Megatron 2021-2022)
    MoeDispatcher dispatcher;  // DeepEP for the model zoo's runs
};

Layout layoutFor(const Run &r)
{
    Layout l;
    l.cluster.gpu = r.gpu;
    l.cluster.gpusPerNode = 8;
    l.cluster.nvlinkDomain = 8;
    l.cluster.nodes = r.gpus / 8;
    l.cluster.nic.gbitPerS = r.nicGbit;
    l.cluster.nic.perGpu = 1;
    l.cluster.fabric.kind = r.fabric;
    ModelConfig m;
    if (r.preset[0]) {
        m.preset = r.preset;
    } else {
        m.layers = r.layers;
        m.hidden = r.hidden;
        m.heads = r.heads;
        m.ffn = 4 * r.hidden;
        m.vocab = 51200;
        m.gatedMlp = false;
    }
    l.model = m;
    l.training.seqLen = r.seq;
    l.training.globalBatch = r.globalBatch;
    l.training.microBatch = r.microBatch;
    l.training.precision = r.precision;
    l.training.recompute = r.recompute;
    l.training.optimizer.distributed = r.distributed;
    l.training.optimizer.zeroStage = r.distributed ? 1 : 0;
    l.training.optimizer.fsdp = r.fsdp;
    l.training.overlap.tp = r.overlapTp;
    l.training.overlap.dp = r.overlapDp;
    l.training.overlap.ep = r.overlapEp;
    l.training.overlap.pp = true;
    l.training.attention = r.attention;
    l.training.moeDispatcher = r.dispatcher;
    l.parallel.tp = r.tp;
    l.parallel.pp = r.pp;
    l.parallel.vp = r.vp;
    l.parallel.dp = r.dp;
    l.parallel.cp = r.cp;
    l.parallel.ep = r.ep;
    l.parallel.sequenceParallel = r.sequenceParallel;
    return l;
}

constexpr auto RO = FabricKind::RailOptimized;
constexpr auto FT = FabricKind::ThreeTier;
constexpr auto FULL = Recompute::Full;
constexpr auto SEL = Recompute::Selective;
constexpr auto NONE = Recompute::None;
constexpr auto B16 = Precision::Bf16;
constexpr auto F8 = Precision::Fp8;
constexpr auto MAT = AttentionKernel::Materialized;
constexpr auto FLASH = AttentionKernel::Flash;
constexpr auto A2A = MoeDispatcher::AllToAll;
constexpr auto DEEPEP = MoeDispatcher::DeepEP;

// Narayanan et al. 2021 report hardware FLOPs including the recompute forward pass:
// F = 96 B s l h^2 (1 + s/6h + V/16lh). Their measured TFLOP/s gives the step time.
double narayananStep(int layers, int hidden, int seq, int batch, int gpus, double tflops)
{
    const double h = hidden, s = seq, l = layers, V = 51200;
    const double f = 96.0 * batch * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
    return f / (tflops * 1e12 * gpus);
}

// throughput.md, section 3. A rows: Megatron 2021 ran full recompute, no distributed optimizer
// and no DP overlap; the paper does not give the micro-batch size (1 assumed) nor the number of
// interleaved stages (1 assumed). C rows: Korthikanti 2022, DP = 1, both the full-recompute
// and the sequence-parallel + selective-recompute times. F rows: NeMo 24.07 FP8 recipes (TP
// communication overlap, distributed optimizer, no recompute assumed: the table says "?").
// I rows: the Megatron MoE model zoo's Qwen3-235B runs.
// clang-format off
const Run kRuns[] = {
    {"A1", "A100-SXM-80GB", 32, 200, FT, "", 24, 2304, 24, 2048, 512, 1, 1, 1, 1, 32, 1, 1, false, false, FULL, false, B16, false, false, false, 0, 0, MAT, A2A},
    {"A2", "A100-SXM-80GB", 64, 200, FT, "", 30, 3072, 32, 2048, 512, 1, 2, 1, 1, 32, 1, 1, false, false, FULL, false, B16, false, false, false, 0, 0, MAT, A2A},
    {"A3", "A100-SXM-80GB", 128, 200, FT, "", 36, 4096, 32, 2048, 512, 1, 4, 1, 1, 32, 1, 1, false, false, FULL, false, B16, false, false, false, 0, 0, MAT, A2A},
    {"A4", "A100-SXM-80GB", 256, 200, FT, "", 40, 6144, 48, 2048, 1024, 1, 8, 1, 1, 32, 1, 1, false, false, FULL, false, B16, false, false, false, 0, 0, MAT, A2A},
    {"A5", "A100-SXM-80GB", 512, 200, FT, "", 48, 8192, 64, 2048, 1536, 1, 8, 2, 1, 32, 1, 1, false, false, FULL, false, B16, false, false, false, 0, 0, MAT, A2A},
    {"A6", "A100-SXM-80GB", 1024, 200, FT, "", 60, 10240, 80, 2048, 1792, 1, 8, 4, 1, 32, 1, 1, false, false, FULL, false, B16, false, false, false, 0, 0, MAT, A2A},
    {"A7", "A100-SXM-80GB", 1536, 200, FT, "", 80, 12288, 96, 2048, 2304, 1, 8, 8, 1, 24, 1, 1, false, false, FULL, false, B16, false, false, false, 0, 0, MAT, A2A},
    {"A8", "A100-SXM-80GB", 1920, 200, FT, "", 96, 16384, 128, 2048, 2160, 1, 8, 16, 1, 15, 1, 1, false, false, FULL, false, B16, false, false, false, 0, 0, MAT, A2A},
    {"A9", "A100-SXM-80GB", 2520, 200, FT, "", 105, 20480, 128, 2048, 2520, 1, 8, 35, 1, 9, 1, 1, false, false, FULL, false, B16, false, false, false, 0, 0, MAT, A2A},
    {"A10", "A100-SXM-80GB", 3072, 200, FT, "", 128, 25600, 160, 2048, 3072, 1, 8, 64, 1, 6, 1, 1, false, false, FULL, false, B16, false, false, false, 0, 0, MAT, A2A},
    {"C1 full", "A100-SXM-80GB", 8, 200, FT, "k-22b", 0, 0, 0, 2048, 4, 4, 8, 1, 1, 1, 1, 1, false, false, FULL, false, B16, false, false, false, 1.42, 0, MAT, A2A},
    {"C1 SP+sel", "A100-SXM-80GB", 8, 200, FT, "k-22b", 0, 0, 0, 2048, 4, 4, 8, 1, 1, 1, 1, 1, false, false, SEL, true, B16, false, false, false, 1.10, 0, MAT, A2A},
    {"C2 full", "A100-SXM-80GB", 64, 200, FT, "gpt3-175b", 0, 0, 0, 2048, 64, 1, 8, 8, 3, 1, 1, 1, false, false, FULL, false, B16, false, false, false, 18.13, 0, MAT, A2A},
    {"C2 SP+sel", "A100-SXM-80GB", 64, 200, FT, "gpt3-175b", 0, 0, 0, 2048, 64, 1, 8, 8, 3, 1, 1, 1, false, false, SEL, true, B16, false, false, false, 13.75, 0, MAT, A2A},
    {"C3 full", "A100-SXM-80GB", 280, 200, FT, "mt-nlg-530b", 0, 0, 0, 2048, 280, 1, 8, 35, 3, 1, 1, 1, false, false, FULL, false, B16, false, false, false, 49.05, 0, MAT, A2A},
    {"C3 SP+sel", "A100-SXM-80GB", 280, 200, FT, "mt-nlg-530b", 0, 0, 0, 2048, 280, 1, 8, 35, 3, 1, 1, 1, false, false, SEL, true, B16, false, false, false, 37.83, 0, MAT, A2A},
    {"C4 full", "A100-SXM-80GB", 512, 200, FT, "k-1t", 0, 0, 0, 2048, 512, 1, 8, 64, 1, 1, 1, 1, false, false, FULL, false, B16, false, false, false, 94.42, 0, MAT, A2A},
    {"C4 SP+sel", "A100-SXM-80GB", 512, 200, FT, "k-1t", 0, 0, 0, 2048, 512, 1, 8, 64, 1, 1, 1, 1, false, false, SEL, true, B16, false, false, false, 71.49, 0, MAT, A2A},
    {"F1", "H100-SXM", 64, 400, RO, "gpt3-5b", 0, 0, 0, 2048, 2048, 4, 1, 1, 1, 64, 1, 1, true, false, NONE, false, F8, true, true, false, 0, 23406, FLASH, A2A},
    {"F2", "H100-SXM", 64, 400, RO, "gpt3-20b", 0, 0, 0, 2048, 256, 2, 2, 1, 1, 32, 1, 1, true, false, NONE, true, F8, true, true, false, 0, 5851, FLASH, A2A},
    {"F3", "H100-SXM", 128, 400, RO, "gpt3-175b", 0, 0, 0, 2048, 256, 1, 4, 8, 6, 4, 1, 1, true, false, NONE, true, F8, true, true, false, 0, 716, FLASH, A2A},
    {"F4", "H100-SXM", 512, 400, RO, "gpt3-175b", 0, 0, 0, 2048, 2048, 2, 4, 8, 6, 16, 1, 1, true, false, NONE, true, F8, true, true, false, 0, 825, FLASH, A2A},
    {"F5", "H100-SXM", 8, 400, RO, "llama2-7b", 0, 0, 0, 4096, 128, 1, 1, 1, 1, 8, 1, 1, true, false, NONE, false, F8, true, true, false, 0, 16934, FLASH, A2A},
    {"F6", "H100-SXM", 16, 400, RO, "llama2-13b", 0, 0, 0, 4096, 128, 1, 1, 4, 10, 4, 1, 1, true, false, NONE, false, F8, true, true, false, 0, 8715, FLASH, A2A},
    {"F7", "H100-SXM", 64, 400, RO, "llama2-70b", 0, 0, 0, 4096, 128, 1, 4, 4, 20, 4, 1, 1, true, false, NONE, true, F8, true, true, false, 0, 1728, FLASH, A2A},
    {"F8", "H100-SXM", 128, 400, RO, "nemotron4-340b", 0, 0, 0, 4096, 32, 1, 8, 8, 12, 2, 1, 1, true, false, NONE, true, F8, true, true, false, 0, 326, FLASH, A2A},
    {"F9", "H100-SXM", 8, 400, RO, "llama3-8b", 0, 0, 0, 8192, 128, 1, 1, 1, 1, 4, 2, 1, true, false, NONE, false, F8, true, true, false, 0, 12273, FLASH, A2A},
    {"F10", "H100-SXM", 64, 400, RO, "llama3-70b", 0, 0, 0, 8192, 128, 1, 4, 4, 5, 2, 2, 1, true, false, NONE, true, F8, true, true, false, 0, 1524, FLASH, A2A},
    {"I1", "H100-SXM", 256, 400, RO, "qwen3-235b-a22b", 0, 0, 0, 4096, 2048, 1, 2, 8, 4, 16, 1, 32, true, false, SEL, true, B16, false, true, false, 19.7, 0, FLASH, DEEPEP},
    {"I2", "H100-SXM", 256, 400, RO, "qwen3-235b-a22b", 0, 0, 0, 4096, 2048, 1, 2, 8, 4, 16, 1, 32, true, false, SEL, true, B16, false, true, true, 17.6, 0, FLASH, DEEPEP},
    {"I3", "H100-SXM", 256, 400, RO, "qwen3-235b-a22b", 0, 0, 0, 4096, 2048, 4, 2, 1, 1, 128, 1, 8, true, true, FULL, true, B16, false, true, false, 17.6, 0, FLASH, DEEPEP},
};
// clang-format on

// Held out: published runs that were not looked at while the model's constants were set (other
// configurations of the same model zoo: NCCL all-to-all dispatch; TP4 with no recomputation).
// They are reported, not fitted: today the model is 20-36% fast on them (MoE layers with many
// small micro-batches pay host-side overheads, token-count syncs and kernel launches, that the
// model does not price). The bound catches regressions; the error is printed.
// clang-format off
const Run kHeldOut[] = {
    {"Z1 A2A TP2 EP8 PP32", "H100-SXM", 256, 400, RO, "qwen3-235b-a22b", 0, 0, 0, 4096, 2048, 1, 2, 32, 3, 4, 1, 8, true, false, SEL, true, B16, false, true, false, 24.2, 0, FLASH, A2A},
    {"Z2 DeepEP TP4 EP8 PP8", "H100-SXM", 256, 400, RO, "qwen3-235b-a22b", 0, 0, 0, 4096, 2048, 1, 4, 8, 4, 8, 1, 8, true, false, NONE, true, B16, false, true, false, 29.0, 0, FLASH, DEEPEP},
};
// clang-format on

const Run *findRun(const QString &id)
{
    for (const Run &r : kRuns)
        if (id == QLatin1String(r.id))
            return &r;
    for (const Run &r : kHeldOut)
        if (id == QLatin1String(r.id))
            return &r;
    return nullptr;
}

// Prices the run and returns its error against the measured step (printed with the breakdown).
double priceRun(const QString &id, const Run &r, double measuredStep, const char *tag)
{
    const Layout l = layoutFor(r);
    const Topology t = buildTopology(l.cluster, Catalog::builtin());
    EvaluateOptions o;
    o.linkLoads = false;
    o.timeline = false;
    const Evaluation e = evaluate(l, t, o);
    if (!e.ok)
        qFatal("%s: %s", qPrintable(id), e.error.c_str());
    const double err = (e.stepTimeS - measuredStep) / measuredStep;
    const StepBreakdown &x = e.exposed;
    qInfo("%-24s step %7.3f s, measured %7.3f s, error %+5.1f%% %s | compute %.3f tp %.3f "
          "cp %.3f ep %.3f bubble %.3f p2p %.3f dp %.3f opt %.3f | mem %.0f GiB | MFU %.1f%%",
          qPrintable(id),
          e.stepTimeS,
          measuredStep,
          100 * err,
          tag,
          x.compute,
          x.tp,
          x.cp,
          x.ep,
          x.ppBubble,
          x.ppP2p,
          x.dp,
          x.optimizer,
          e.memory.totalGiB(),
          100 * e.mfu);
    for (const Warning &w : e.warnings)
        if (w.severity != Severity::Info)
            qInfo("           %s", w.message.c_str());
    return err;
}

} // namespace

class TestThroughput : public QObject
{
    Q_OBJECT

    QList<double> m_cErrors;

private Q_SLOTS:
    void publishedRuns_data()
    {
        QTest::addColumn<QString>("id");
        for (const Run &r : kRuns)
            QTest::newRow(r.id) << QString::fromLatin1(r.id);
    }
    void publishedRuns()
    {
        QFETCH(QString, id);
        const Run &r = *findRun(id);
        double measuredStep = r.stepS;
        if (r.tokensPerGpu > 0)
            measuredStep = double(r.globalBatch) * r.seq / (r.tokensPerGpu * r.gpus);
        if (id.startsWith(QLatin1Char('A'))) {
            static const double tflops[] = {137, 138, 142, 135, 138, 140, 148, 155, 163, 163};
            measuredStep = narayananStep(r.layers,
                                         r.hidden,
                                         r.seq,
                                         r.globalBatch,
                                         r.gpus,
                                         tflops[id.mid(1).toInt() - 1]);
        }
        const double err = priceRun(id, r, measuredStep, "");
        if (id.startsWith(QLatin1Char('C')))
            m_cErrors << std::abs(err);
        QVERIFY2(std::abs(err) <= 0.10, qPrintable(QString::number(100 * err, 'f', 1) + "%"));
    }

    void heldOutRuns_data()
    {
        QTest::addColumn<QString>("id");
        for (const Run &r : kHeldOut)
            QTest::newRow(r.id) << QString::fromLatin1(r.id);
    }
    void heldOutRuns()
    {
        QFETCH(QString, id);
        const Run &r = *findRun(id);
        const double err = priceRun(id, r, r.stepS, "(held out)");
        QVERIFY2(std::abs(err) <= 0.40, qPrintable(QString::number(100 * err, 'f', 1) + "%"));
    }

    void calculonComparison()
    {
        // Calculon's mean absolute error on C1-C4 (both variants) is 3.65%.
        if (m_cErrors.size() != 8)
            QSKIP("run with the C rows");
        double sum = 0;
        for (double e : m_cErrors)
            sum += e;
        qInfo("mean |error| on C1-C4: %.2f%% (Calculon: 3.65%%)", 100 * sum / m_cErrors.size());
        QVERIFY(sum / m_cErrors.size() <= 0.0365);
    }
};

QTEST_APPLESS_MAIN(TestThroughput)
#include "tst_throughput.moc"
