#include "publishedruns.h"

#include "layout/softwarestack.h"
#include "topology/topology.h"

#include <QFile>

#include <algorithm>

namespace railyard::test {

namespace {

[[noreturn]] void bad(const QString &line, const QString &why)
{
    qFatal("runs.txt: %s: %s", qPrintable(line), qPrintable(why));
}

ModelConfig modelFor(const QString &spec)
{
    ModelConfig m;
    const QStringList parts = spec.split(QLatin1Char(':'));
    if (parts[0] == QLatin1String("mg") || parts[0] == QLatin1String("mh")) {
        m.layers = parts.value(1).toInt();
        m.hidden = parts.value(2).toInt();
        m.heads = parts.value(3).toInt();
        m.ffn = 4 * *m.hidden;
        m.vocab = parts[0] == QLatin1String("mg") ? 51200 : 131072;
        m.gatedMlp = false;
        for (int i = 4; i < parts.size(); ++i) {
            if (parts[i].startsWith(QLatin1Char('v')))
                m.vocab = parts[i].mid(1).toInt();
            else if (parts[i].startsWith(QLatin1Char('f'))) // an FFN other than 4h
                m.ffn = parts[i].mid(1).toInt();
            else if (parts[i] == QLatin1String("nodrop"))
                m.dropout = false;
        }
        return m;
    }
    if (parts[0] == QLatin1String("ll")) {
        // ll:L:h:a:kv:ffn[:vN]: a Llama-style model (SwiGLU, RMSNorm, RoPE) of these dimensions.
        m.layers = parts.value(1).toInt();
        m.hidden = parts.value(2).toInt();
        m.heads = parts.value(3).toInt();
        m.kvHeads = parts.value(4).toInt();
        m.ffn = parts.value(5).toInt();
        m.vocab = parts.size() > 6 && parts[6].startsWith(QLatin1Char('v'))
                          ? parts[6].mid(1).toInt()
                          : 32000;
        m.gatedMlp = true;
        return m;
    }
    m.preset = parts[0].toStdString();
    for (int i = 1; i < parts.size(); ++i) {
        if (parts[i].startsWith(QLatin1Char('a')))
            m.heads = parts[i].mid(1).toInt();
        else if (parts[i].startsWith(QLatin1Char('v')))
            m.vocab = parts[i].mid(1).toInt();
        else if (parts[i] == QLatin1String("nodrop"))
            m.dropout = false;
    }
    if (m.heads) {
        m.kvHeads = *m.heads;
        if (m.preset == "gpt3-175b")
            m.headDim = 12288 / *m.heads;
    }
    return m;
}

// Measured tokens/s/GPU from what the source printed.
double measuredTokens(const Run &r, const ModelConfig &m)
{
    const QString kind = r.measured.section(QLatin1Char(':'), 0, 0);
    const double v = r.measured.section(QLatin1Char(':'), 1).toDouble();
    const ModelDims d = resolveModel(m).dims;
    const double l = d.layers, h = d.hidden, s = r.seq, V = d.vocab;
    if (kind == QLatin1String("tok") || kind == QLatin1String("j"))
        return v;
    if (kind == QLatin1String("step"))
        return double(r.gbs) * r.seq / (v * r.gpus);
    if (kind == QLatin1String("nar")) // 96 B s l h^2 (1 + s/6h + V/16lh), with recompute
        return v * 1e12 / (96.0 * l * h * h * (1 + s / (6 * h) + V / (16 * l * h)));
    if (kind == QLatin1String("mc")) // 72 B s l h^2 (1 + s/6h + V/12lh)
        return v * 1e12 / (72.0 * l * h * h * (1 + s / (6 * h) + V / (12 * l * h)));
    bad(r.id, QStringLiteral("unknown measurement ") + r.measured);
}

} // namespace

QList<Run> readRuns()
{
    QFile f(QStringLiteral(RAILYARD_TEST_DATA "/throughput/runs.txt"));
    if (!f.open(QIODevice::ReadOnly | QIODevice::Text))
        qFatal("cannot read %s", qPrintable(f.fileName()));
    QList<Run> runs;
    while (!f.atEnd()) {
        const QString line = QString::fromUtf8(f.readLine()).trimmed();
        if (line.isEmpty() || line.startsWith(QLatin1Char('#')))
            continue;
        const QStringList c = line.split(QLatin1Char(' '), Qt::SkipEmptyParts);
        if (c.size() != 21)
            bad(line, QStringLiteral("expected 21 columns"));
        Run r;
        int i = 0;
        r.id = c[i++];
        r.family = r.id[0];
        r.heldOut = c[i] == QLatin1String("1");
        r.section3d = c[i++] == QLatin1String("d");
        r.system = c[i++];
        r.model = c[i++];
        for (int *v : {&r.gpus, &r.seq, &r.gbs, &r.mbs, &r.tp, &r.pp, &r.vp, &r.dp, &r.cp, &r.ep})
            *v = c[i++].toInt();
        r.shard = c[i++];
        r.recompute = c[i++];
        r.sp = c[i++] == QLatin1String("1");
        r.precision = c[i++];
        r.stack = c[i++];
        r.measured = c[i++];
        if (c[i] != QLatin1String("-"))
            r.flags = c[i].split(QLatin1Char(','));
        for (const QString &f : std::as_const(r.flags))
            if (f.startsWith(QLatin1String("mem:")))
                r.measuredMemGiB = f.mid(4).toDouble();
            else if (f.startsWith(QLatin1String("memalloc:")))
                r.measuredAllocGiB = f.mid(9).toDouble();
        if (r.tp * r.pp * r.dp * r.cp != r.gpus)
            bad(line, QStringLiteral("TP x PP x DP x CP is not the GPU count"));
        r.measuredTokens = measuredTokens(r, modelFor(r.model));
        runs << r;
    }
    return runs;
}

Layout layoutFor(const Run &r)
{
    Layout l;
    ClusterConfig &c = l.cluster;
    c.gpusPerNode = 8;
    c.nvlinkDomain = 8;
    c.nodes = r.gpus / 8;
    if (r.gpus < 8) {
        // Part of one 8-GPU server (family H's four A100): its NVSwitch joins them at full rate.
        c.gpusPerNode = c.nvlinkDomain = r.gpus;
        c.nodes = 1;
    }
    c.nic.perGpu = 1;
    if (r.system == QLatin1String("SEL") || r.system == QLatin1String("BDA")
        || r.system == QLatin1String("MOA")) {
        c.gpu = "A100-SXM-80GB";
        c.nic.gbitPerS = 200;
        c.fabric.kind = FabricKind::ThreeTier;
    } else if (r.system == QLatin1String("IBA")) {
        // IBM fms-fsdp's A100 cluster: "128 A100 GPUs with 400Gbps network connectivity and GPU
        // direct RDMA", read as 400 Gb/s a node, four 100G EFA adapters (its scripts set AWS
        // EFA's library paths: a p4de-like node; assumed).
        c.gpu = "A100-SXM-80GB";
        c.nic.gbitPerS = 100;
        c.nic.perGpu = 0.5;
        c.nic.model = "EFA-100-p4d";
        c.fabric.kind = FabricKind::ThreeTier;
    } else if (r.system == QLatin1String("IBH")) {
        // IBM fms-fsdp's H100 cluster: "96 GPUs and 800Gbps inter-node interconnect", read as
        // one 100G RoCE port a GPU (the fabric is not stated; assumed).
        c.gpu = "H100-SXM";
        c.nic.gbitPerS = 100;
        c.nic.model = "RoCE-200G";
        c.fabric.kind = FabricKind::ThreeTier;
    } else if (r.system == QLatin1String("JZ")) {
        // Jean Zay's A100 partition: four 100 Gb/s Omni-Path adapters per 8-GPU node.
        c.gpu = "A100-SXM-80GB";
        c.nic.gbitPerS = 100;
        c.nic.perGpu = 0.5;
        c.nic.model = "OPA-100";
        c.fabric.kind = FabricKind::ThreeTier;
    } else if (r.system == QLatin1String("TYC") || r.system == QLatin1String("GB2")
               || r.system == QLatin1String("GB3")) {
        // GB200 / GB300 NVL72 racks: compute trays of 4 GPUs, each GPU with its own NIC
        // (GB200: CX-7 400G; GB300: CX-8 800G); a job takes 64 GPUs of each 72-GPU rack (16
        // trays: Tyche's ngpu512 maps 64 per rack; assumed for DGX-GB200 / GB300 too).
        const bool gb300 = r.system == QLatin1String("GB3");
        c.gpu = gb300 ? "GB300" : "GB200";
        c.gpusPerNode = 4;
        c.nvlinkDomain = std::min(64, r.gpus);
        c.nodes = r.gpus / 4;
        c.nic.gbitPerS = gb300 ? 800 : 400;
        c.nic.model = gb300 ? "CX8-XDR" : "CX7-NDR";
        c.fabric.kind = FabricKind::RailOptimized;
    } else if (r.system == QLatin1String("B2H")) {
        // DGX B200: 8 B200 on NVLink 5 (NVSwitch), 8 x CX-7 400G per node.
        c.gpu = "B200";
        c.nic.gbitPerS = 400;
        c.nic.model = "CX7-NDR";
        c.fabric.kind = FabricKind::RailOptimized;
    } else if (r.system == QLatin1String("WFH")) {
        // WhiteFiber's H200 hosts (family Y): 8 H200, one 400G CX-7 a GPU (InfiniBand assumed).
        c.gpu = "H200-SXM";
        c.nic.gbitPerS = 400;
        c.fabric.kind = FabricKind::RailOptimized;
    } else {
        // EOS, MLM, ZOO, META; TTN's H100 is the Grand Teton variant (catalogFor).
        c.gpu = "H100-SXM";
        c.nic.gbitPerS = 400;
        c.fabric.kind = FabricKind::RailOptimized;
    }
    if (r.flags.contains(QLatin1String("nonvls")))
        c.tuning.nvls = false;
    if (r.system == QLatin1String("META") || r.system == QLatin1String("TTN"))
        c.nic.model = "RoCE-400G";
    if (r.system == QLatin1String("BDA") || r.system == QLatin1String("MOA"))
        c.nic.model = "RoCE-200G";
    l.model = modelFor(r.model);
    TrainingConfig &t = l.training;
    const StackProfile *stack = findStack(
            r.stack == QLatin1String("generic") ? std::string() : r.stack.toStdString());
    if (!stack)
        bad(r.id, QStringLiteral("unknown stack ") + r.stack);
    t.optimizer.fsdp = r.shard == QLatin1String("fsdp");
    applyStackDefaults(t, *stack);
    t.seqLen = r.seq;
    t.globalBatch = r.gbs;
    t.microBatch = r.mbs;
    t.precision = r.precision == QLatin1String("fp8") ? Precision::Fp8 : Precision::Bf16;
    t.recompute = r.recompute == QLatin1String("full")  ? Recompute::Full
                  : r.recompute == QLatin1String("sel") ? Recompute::Selective
                                                        : Recompute::None;
    OptimizerConfig &o = t.optimizer;
    o.distributed = r.shard != QLatin1String("ddp");
    o.zeroStage = r.shard == QLatin1String("ddp")  ? 0
                  : r.shard == QLatin1String("z2") ? 2
                  : r.shard == QLatin1String("z3") ? 3
                                                   : 1;
    o.fsdp = r.shard == QLatin1String("fsdp");
    for (const QString &f : r.flags) {
        if (f.startsWith(QLatin1String("offload"))) // Megatron-Core's cpu_offloading_num_layers
            t.offloadLayers = f.mid(7).toInt();
        if (f.startsWith(QLatin1String("hsdp"))) // hybrid sharding over groups of N ranks
            o.shardGroup = f.mid(4).toInt();
        if (f.startsWith(QLatin1String("rcl"))) // full recomputation of N layers a stage
            t.recomputeLayers = f.mid(3).toInt();
        if (f.startsWith(QLatin1String("rm:"))) { // Megatron's --recompute-modules, '+'-joined
            t.recomputeModules = 0;
            for (const QString &name : f.mid(3).split(QLatin1Char('+'))) {
                bool known = false;
                for (const auto &[n, bit] : recomputeModuleNames())
                    if (name.toStdString() == n) {
                        t.recomputeModules |= bit;
                        known = true;
                    }
                if (!known)
                    qFatal("runs.txt: %s: unknown recompute module %s",
                           qPrintable(r.id),
                           qPrintable(name));
            }
        }
    }
    if (r.flags.contains(QLatin1String("fa2")))
        t.attention = AttentionKernel::FlashAttention2;
    if (r.flags.contains(QLatin1String("triton")))
        t.attention = AttentionKernel::FlashAttentionTriton;
    t.overlap.ep = r.flags.contains(QLatin1String("ovep"));
    if (r.flags.contains(QLatin1String("nodpov")))
        t.overlap.dp = false;
    if (r.flags.contains(QLatin1String("asynctp")))
        t.overlap.tp = true;
    if (r.flags.contains(QLatin1String("notpo")))
        t.overlap.tp = false;
    t.moeForceBalance = r.flags.contains(QLatin1String("forcebal"));
    if (r.flags.contains(QLatin1String("compile")))
        t.compile = true;
    if (r.flags.contains(QLatin1String("fp32grad")))
        o.gradReduceFp32 = true;
    o.fp8ParamGather = r.flags.contains(QLatin1String("fp8pg"));
    for (const QString &f : r.flags) // bucketmbN: apex's bucket_cap_mb N, in gradient elements
        if (f.startsWith(QLatin1String("bucketmb")))
            o.bucketParams = f.mid(8).toDouble() * 1024 * 1024 / (o.gradReduceFp32 ? 4.0 : 2.0);
    t.moeDispatcher = r.flags.contains(QLatin1String("deepep")) ? MoeDispatcher::DeepEP
                                                                : MoeDispatcher::AllToAll;
    ParallelConfig &p = l.parallel;
    p.tp = r.tp;
    p.pp = r.pp;
    p.vp = r.vp;
    p.dp = r.dp;
    p.cp = r.cp;
    p.ep = r.ep;
    p.sequenceParallel = r.sp;
    if (r.flags.contains(QLatin1String("dpouter")))
        p.order = "tp-cp-ep-pp-dp";
    return l;
}

Catalog catalogFor(const Run &r, const Catalog &catalog, double clockScale)
{
    if (r.system != QLatin1String("TTN"))
        return catalog;
    // torchtitan's docs/performance.md (github.com/pytorch/torchtitan at eaea6f6, "Grand Teton
    // platform"): "Each H100 GPU is equipped with 96GB HBM2e with 2.4 TB/sec peak memory
    // bandwidth", "We used the default 500W power limit"; footnote 2: "the actual peak TFLOPs
    // number is between SXM and NVL, and we don't know its exact value". The same part shows
    // 94 GiB to programs (arXiv 2604.11391, section 2: "H100: HBM2e, 94 GiB, 2.41 TB/s").
    // The 500 W clock is measured on that board's GEMMs (FBGEMM PR #2546's "H100 500W" and
    // float8_experimental's BF16 rows, tests/data/kernels/gemm.csv): 0.722 of the 700 W part's
    // rate at the same shapes in a short benchmark, the median of 11 rows, which a 500 W limit
    // holds from the first milliseconds; over the 700 W part's sustained clock (0.90), 0.802
    // (tst_kernels::grandTetonClockFromKernels). tst_throughput::grandTetonClock reports the T
    // rows at the source's bracket too (1.0, 0.922 its middle, 0.844 the H100 NVL's peak ratio).
    Catalog c = catalog;
    GpuSpec g = *catalog.gpu("H100-SXM");
    g.name = "NVIDIA H100 SXM5 96GB HBM2e (Grand Teton, 500 W)";
    g.hbmGB = 96;
    g.hbmUsableGiB = 94;
    g.hbmTBPerS = 2.4;
    g.tdpW = 500;
    g.sustainedClock *= clockScale;
    g.sustainedClockFp8 *= clockScale;
    c.setGpu(g);
    return c;
}

Priced price(const Run &r, const Catalog &catalog, double grandTetonClock)
{
    const Layout l = layoutFor(r);
    const Catalog cat = catalogFor(r, catalog, grandTetonClock);
    const Topology t = buildTopology(l.cluster, cat);
    EvaluateOptions o;
    o.linkLoads = false;
    o.timeline = false;
    Priced p;
    p.e = evaluate(l, t, o);
    if (!p.e.ok)
        qFatal("%s: %s", qPrintable(r.id), p.e.error.c_str());
    p.err = (p.e.tokensPerSPerGpu - r.measuredTokens) / r.measuredTokens;
    return p;
}

bool outOfMemory(const Evaluation &e)
{
    return std::any_of(e.warnings.begin(), e.warnings.end(), [](const Warning &w) {
        return w.code == "out-of-memory";
    });
}

std::string gpuFor(const Run &r)
{
    return layoutFor(r).cluster.gpu;
}

} // namespace railyard::test
