#include "layout/layout.h"
#include "layout/softwarestack.h"
#include "step/evaluate.h"
#include "step/fidelity.h"
#include "topology/topology.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

using namespace railyard::engine;

// Every published run of the reference throughput.md, sections 3 and 3b, priced by the engine
// and compared in tokens/s per GPU. The runs, their sources and the assumptions made where a
// source is silent are in tests/data/throughput/runs.txt. A quarter of the runs are held out
// (chosen by a hash of the run id, see tests/data/throughput/README.md): the engine's
// constants were set without looking at them, and they are reported apart.
namespace {

struct Run
{
    QString id;
    QChar family;
    bool heldOut = false;
    QString system, model;
    int gpus = 0, seq = 0, gbs = 0, mbs = 0, tp = 1, pp = 1, vp = 1, dp = 1, cp = 1, ep = 1;
    QString shard, recompute, precision, stack, measured;
    bool sp = false;
    QStringList flags;
    double measuredTokens = 0; // tokens/s/GPU
};

struct Priced
{
    Evaluation e;
    double err = 0; // (model - measured) / measured, tokens/s/GPU
};

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
        return m;
    }
    m.preset = parts[0].toStdString();
    for (int i = 1; i < parts.size(); ++i) {
        if (parts[i].startsWith(QLatin1Char('a')))
            m.heads = parts[i].mid(1).toInt();
        else if (parts[i].startsWith(QLatin1Char('v')))
            m.vocab = parts[i].mid(1).toInt();
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
        r.heldOut = c[i++] == QLatin1String("1");
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
    c.nic.perGpu = 1;
    if (r.system == QLatin1String("SEL") || r.system == QLatin1String("BDA")) {
        c.gpu = "A100-SXM-80GB";
        c.nic.gbitPerS = 200;
        c.fabric.kind = FabricKind::ThreeTier;
    } else {
        c.gpu = "H100-SXM";
        c.nic.gbitPerS = 400;
        c.fabric.kind = FabricKind::RailOptimized;
    }
    if (r.system == QLatin1String("META"))
        c.nic.model = "RoCE-400G";
    if (r.system == QLatin1String("BDA"))
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
    t.overlap.ep = r.flags.contains(QLatin1String("ovep"));
    if (r.flags.contains(QLatin1String("fp32grad")))
        o.gradReduceFp32 = true;
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

Priced price(const Run &r)
{
    const Layout l = layoutFor(r);
    const Topology t = buildTopology(l.cluster, Catalog::builtin());
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

struct Summary
{
    int n = 0;
    double median = 0, within10 = 0, within15 = 0;
    double worst = 0; // signed: the error of the run furthest off
    QString worstId;
};

Summary summarize(const QList<Run> &runs, const QList<Priced> &priced, int part)
{
    // part: 0 fitted, 1 held out (both in sections 3/3b), 2 family Z, 3 all of 3/3b.
    QList<double> errs;
    Summary s;
    for (int i = 0; i < runs.size(); ++i) {
        const Run &r = runs[i];
        const int p = r.family == QLatin1Char('Z') ? 2 : r.heldOut ? 1 : 0;
        if (p != part && !(part == 3 && p != 2))
            continue;
        const double a = std::abs(priced[i].err);
        errs << a;
        if (a > std::abs(s.worst)) {
            s.worst = priced[i].err;
            s.worstId = r.id;
        }
    }
    s.n = int(errs.size());
    if (errs.isEmpty())
        return s;
    std::sort(errs.begin(), errs.end());
    s.median = errs.size() % 2 ? errs[errs.size() / 2]
                               : (errs[errs.size() / 2 - 1] + errs[errs.size() / 2]) / 2;
    for (double a : errs) {
        s.within10 += a <= 0.10;
        s.within15 += a <= 0.15;
    }
    s.within10 /= errs.size();
    s.within15 /= errs.size();
    return s;
}

// resources/fidelity.json keeps four decimals of each error.
constexpr double kResidualTolerance = 0.5e-4 + 1e-9;

// What differs between the residuals of a file and the model's: empty when none does.
std::string staleness(const std::vector<ValidationRun> &file,
                      const std::vector<ValidationRun> &model)
{
    if (file.size() != model.size())
        return "the file holds " + std::to_string(file.size()) + " runs; the model prices "
               + std::to_string(model.size());
    std::string out;
    for (std::size_t i = 0; i < file.size(); ++i) {
        const ValidationRun &a = file[i], &b = model[i];
        const auto regime = [](const ValidationRun &r) {
            return std::make_tuple(r.id,
                                   r.architecture,
                                   r.precision,
                                   r.gpus,
                                   r.moe,
                                   r.zero3,
                                   r.contextParallel,
                                   r.heldOut);
        };
        if (regime(a) != regime(b))
            out += "\n  run " + std::to_string(i) + " " + b.id + ": regime differs (file: " + a.id
                   + ", " + a.architecture + " " + a.precision + ", " + std::to_string(a.gpus)
                   + " GPUs)";
        else if (!(std::abs(a.error - b.error) <= kResidualTolerance))
            out += "\n  " + b.id + ": error " + std::to_string(a.error) + " in the file, "
                   + std::to_string(b.error) + " from the model";
    }
    return out;
}

} // namespace

class TestThroughput : public QObject
{
    Q_OBJECT

    QList<Run> m_runs;
    QList<Priced> m_priced;

    // The residuals resources/fidelity.json holds, as the model gives them now (sections 3 and
    // 3b; errors not rounded).
    std::vector<ValidationRun> residuals() const
    {
        std::vector<ValidationRun> out;
        for (int i = 0; i < m_runs.size(); ++i) {
            const Run &r = m_runs[i];
            if (r.family == QLatin1Char('Z'))
                continue;
            ValidationRun v;
            v.id = r.id.toStdString();
            v.architecture = r.system == QLatin1String("SEL") || r.system == QLatin1String("BDA")
                                     ? "ampere"
                                     : "hopper";
            v.precision = r.precision.toStdString();
            v.gpus = r.gpus;
            v.moe = r.ep > 1;
            v.zero3 = r.shard == QLatin1String("z3") || r.shard == QLatin1String("fsdp");
            v.contextParallel = r.cp > 1;
            v.heldOut = r.heldOut;
            v.error = m_priced[i].err;
            out.push_back(std::move(v));
        }
        return out;
    }

    void writeResiduals(const QString &path) const
    {
        QJsonArray runs;
        for (const ValidationRun &v : residuals()) {
            QJsonObject o;
            o[QStringLiteral("id")] = QString::fromStdString(v.id);
            o[QStringLiteral("architecture")] = QString::fromStdString(v.architecture);
            o[QStringLiteral("precision")] = QString::fromStdString(v.precision);
            o[QStringLiteral("gpus")] = v.gpus;
            o[QStringLiteral("moe")] = v.moe;
            o[QStringLiteral("zero3")] = v.zero3;
            o[QStringLiteral("context_parallel")] = v.contextParallel;
            o[QStringLiteral("held_out")] = v.heldOut;
            o[QStringLiteral("error")] = std::round(v.error * 10000) / 10000;
            runs.append(o);
        }
        QJsonObject doc;
        doc[QStringLiteral("format")] = QStringLiteral("railyard-fidelity");
        doc[QStringLiteral("notes")] = QStringLiteral(
                "Residuals of the engine against every published run of the reference "
                "throughput.md sections 3 and 3b (tests/data/throughput/runs.txt): error = "
                "(model - measured) / measured tokens/s/GPU. Generated by "
                "RAILYARD_WRITE_RESIDUALS=resources/fidelity.json tst_throughput; regenerate "
                "after any change to the model.");
        doc[QStringLiteral("runs")] = runs;
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
            qFatal("cannot write %s", qPrintable(path));
        f.write(QJsonDocument(doc).toJson(QJsonDocument::Indented));
        qInfo("wrote %lld residuals to %s", qint64(runs.size()), qPrintable(path));
    }

    int indexOf(const QString &id) const
    {
        for (int i = 0; i < m_runs.size(); ++i)
            if (m_runs[i].id == id)
                return i;
        qFatal("no run %s", qPrintable(id));
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_runs = readRuns();
        for (const Run &r : m_runs)
            m_priced << price(r);
        // RAILYARD_WRITE_RESIDUALS=resources/fidelity.json: write the residuals the engine's
        // uncertainty band is taken from (sections 3 and 3b, fitted and held out).
        const QByteArray out = qgetenv("RAILYARD_WRITE_RESIDUALS");
        if (!out.isEmpty())
            writeResiduals(QString::fromLocal8Bit(out));
    }

    // One line per run: measured and modelled tokens/s/GPU, the error and the breakdown.
    void publishedRuns_data()
    {
        QTest::addColumn<int>("index");
        for (int i = 0; i < m_runs.size(); ++i)
            QTest::newRow(qPrintable(m_runs[i].id)) << i;
    }
    void publishedRuns()
    {
        QFETCH(int, index);
        const Run &r = m_runs[index];
        const Evaluation &e = m_priced[index].e;
        const double err = m_priced[index].err;
        const StepBreakdown &x = e.exposed;
        qInfo("%-8s %-9s tok/s/GPU %8.1f measured %8.1f error %+6.1f%% | step %7.3f s: compute "
              "%.3f tp %.3f cp %.3f ep %.3f bubble %.3f p2p %.3f dp %.3f opt %.3f | %.1f GiB of "
              "%.1f | MFU %.1f%%",
              qPrintable(r.id),
              r.family == QLatin1Char('Z') ? "(extra)"
              : r.heldOut                  ? "(held)"
                                           : "",
              e.tokensPerSPerGpu,
              r.measuredTokens,
              100 * err,
              e.stepTimeS,
              x.compute,
              x.tp,
              x.cp,
              x.ep,
              x.ppBubble,
              x.ppP2p,
              x.dp,
              x.optimizer,
              e.memory.totalGiB(),
              e.hbmGiB,
              100 * e.mfu);
        // Every run here really ran: it must fit in memory, except where the engine cannot
        // express how it was made to fit.
        if (!r.flags.contains(QLatin1String("oom-known")))
            QVERIFY2(!outOfMemory(e), "priced out of memory");
        // No single run may be far off (a regression guard; the goals are on the summary).
        // Family Z: MoE runs with hundreds of micro-batches, whose host-side dispatch costs the
        // engine does not price: a known miss (48% and 92% today), held to the fitted rows'
        // bound as an expected failure, so pricing them right (issue 19) shows as XPASS and
        // the expectation has to be lifted.
        const double bound = r.heldOut ? 0.40 : 0.30;
        if (r.family == QLatin1Char('Z'))
            QEXPECT_FAIL(QTest::currentDataTag(),
                         "family Z: MoE host-side dispatch per micro-batch is not priced",
                         Continue);
        QVERIFY2(std::abs(err) <= bound, qPrintable(QString::number(100 * err, 'f', 1) + "%"));
    }

    // Median |error| and the share within 10% and 15%, fitted and held-out runs apart.
    void summary()
    {
        const char *names[] = {"fitted (3/3b)", "held out (3/3b)", "family Z (extra)", "all (3/3b)"};
        Summary s[4];
        for (int part = 0; part < 4; ++part) {
            s[part] = summarize(m_runs, m_priced, part);
            qInfo("%-18s %2d runs: median |error| %4.1f%%, within 10%% %3.0f%%, within 15%% "
                  "%3.0f%%, worst %s %+.1f%%",
                  names[part],
                  s[part].n,
                  100 * s[part].median,
                  100 * s[part].within10,
                  100 * s[part].within15,
                  qPrintable(s[part].worstId),
                  100 * s[part].worst);
        }
        QCOMPARE(s[0].n + s[1].n, 62);
        // The goals are median |error| at most 6% and 90% of runs within 15%, on all of
        // sections 3 and 3b: reached (5.3%, 56 of 62). The fitted runs: 4.9%, 47 of 49 (E4 and
        // I2 outside). The held-out runs (looked at once, at the end) reach a 6.0% median but
        // only 9 of 13 within 15%: small dense models (E1, E2, F9) are priced fast. Asserted:
        // what is reached, with a little room.
        QVERIFY2(s[0].median <= 0.055, "fitted median");
        QVERIFY2(s[0].within15 >= 0.93, "fitted share within 15%");
        QVERIFY2(s[1].median <= 0.065, "held-out median");
        QVERIFY2(s[1].within15 >= 0.69, "held-out share within 15%");
        QVERIFY2(s[3].median <= 0.056, "median over all runs");
        QVERIFY2(s[3].within15 >= 0.90, "share of all runs within 15%");
    }

    // Every uncertainty band comes from resources/fidelity.json: it must hold what the model
    // gives now. The file keeps four decimals, so a current file is within half of the last
    // one of the model (kResidualTolerance, with room for rounding at a tie).
    void fidelityFileIsCurrent()
    {
        const std::vector<ValidationRun> model = residuals();
        QCOMPARE(model.size(), std::size_t(62));
        const QString path = QStringLiteral(RAILYARD_SOURCE_DIR "/resources/fidelity.json");
        QFile f(path);
        QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(path));
        const std::vector<ValidationRun> file = parseValidationRuns(f.readAll().toStdString(),
                                                                    path.toStdString());
        const std::string regenerate = "\nresources/fidelity.json is not what the model gives now; "
                                       "regenerate it (from the source folder) with\n  "
                                       "RAILYARD_WRITE_RESIDUALS=resources/fidelity.json "
                                       "build/tests/engine/tst_throughput\nand rebuild";
        const std::string stale = staleness(file, model);
        QVERIFY2(stale.empty(), (stale + regenerate).c_str());
        // What the engine built in is that file.
        QVERIFY2(staleness(validationRuns(), model).empty(),
                 "the built-in residuals differ from resources/fidelity.json: rebuild");
        // The check sees a change in any run: its error, its regime, a run gone.
        std::vector<ValidationRun> off = file;
        off[10].error += 2 * kResidualTolerance;
        QVERIFY(staleness(off, model).find(file[10].id + ": error") != std::string::npos);
        off = file;
        off[3].moe = !off[3].moe;
        QVERIFY(staleness(off, model).find(file[3].id + ": regime") != std::string::npos);
        off = file;
        off.pop_back();
        QVERIFY(staleness(off, model).find("61 runs; the model prices 62") != std::string::npos);
    }

    // ZeRO-3 at scale: DeepSpeed's GPT-3 175B per-GPU throughput collapses as DP grows (B7-B9),
    // while PTD-P (B1-B3) holds.
    void zero3Collapse()
    {
        const double b3 = m_priced[indexOf(QStringLiteral("B3"))].e.tokensPerSPerGpu;
        const double b9 = m_priced[indexOf(QStringLiteral("B9"))].e.tokensPerSPerGpu;
        qInfo("B3 (PTD-P, 1536 GPUs) %.1f tok/s/GPU, B9 (ZeRO-3, 1536 GPUs) %.1f: ratio %.2f",
              b3,
              b9,
              b9 / b3);
        QVERIFY(b9 < b3 / 2);
        // The collapse follows DP: B8 (768 GPUs) sits between.
        const double b8 = m_priced[indexOf(QStringLiteral("B8"))].e.tokensPerSPerGpu;
        QVERIFY(b8 > b9 && b8 < b3);
    }
};

QTEST_APPLESS_MAIN(TestThroughput)
#include "tst_throughput.moc"
