#include "layout/softwarestack.h"
#include "step/fidelity.h"
#include "throughput/crossvalidation.h"
#include "throughput/publishedruns.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

using namespace railyard::engine;
using namespace railyard::test;

// Every published run of the reference throughput.md, sections 3, 3b and 3d, priced by the
// engine and compared in tokens/s per GPU. The runs, their sources and the assumptions made where
// a source is silent are in tests/data/throughput/runs.txt. A quarter of the runs of sections 3
// and 3b were held out (chosen by a hash of the run id, see tests/data/throughput/README.md);
// section 3d was released after the engine was measured on it. The headline is out of sample:
// each source family held out in turn, the fitted constants refit without it
// (throughput/crossvalidation.h).
namespace {

// Which runs a summary covers.
enum class Part { Fitted, HeldOut, Section3d, Extra, All };

// Families Z (model zoo MoE), L (MLPerf v5.0 Llama 3.1 405B on H100 and GB200), W (Megatron-
// Bridge 25.11 on GB300, GB200 and B200), T (torchtitan's own runs on Grand Teton H100), O
// (llm-foundry's MPT runs under Composer on H100 and A100) and R (IBM's fms-fsdp, plain PyTorch
// FSDP on A100 and H100), N (MT-NLG 530B's own runs under Megatron-DeepSpeed), H (DeepSpeed
// and FSDP under Accelerate), Y (torchtitan on H200) and U (Megatron-LM on one DGX B200 node)
// are not in the reference sections the goals are set on: reported apart, and in the band's
// residuals.
bool extra(const Run &r)
{
    return r.family == QLatin1Char('Z') || r.family == QLatin1Char('L')
           || r.family == QLatin1Char('T') || r.family == QLatin1Char('W')
           || r.family == QLatin1Char('O') || r.family == QLatin1Char('R')
           || r.family == QLatin1Char('N') || r.family == QLatin1Char('H')
           || r.family == QLatin1Char('Y') || r.family == QLatin1Char('U');
}

bool inPart(const Run &r, Part part)
{
    const bool z = extra(r);
    switch (part) {
    case Part::Fitted: return !z && !r.heldOut && !r.section3d;
    case Part::HeldOut: return !z && r.heldOut;
    case Part::Section3d: return r.section3d;
    case Part::Extra: return z;
    case Part::All: return !z;
    }
    return false;
}

struct Summary
{
    int n = 0;
    double median = 0, within10 = 0, within15 = 0, within20 = 0;
    double worst = 0; // signed: the error of the run furthest off
    QString worstId;
};

double median(QList<double> v)
{
    std::sort(v.begin(), v.end());
    return v.isEmpty()    ? 0.0
           : v.size() % 2 ? v[v.size() / 2]
                          : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// `error[i]`: run i's (model - measured) / measured; NaN: not counted.
Summary summarize(const QList<Run> &runs, const QList<double> &error, Part part)
{
    QList<double> errs;
    Summary s;
    for (int i = 0; i < runs.size(); ++i) {
        const Run &r = runs[i];
        if (!inPart(r, part) || std::isnan(error[i]))
            continue;
        const double a = std::abs(error[i]);
        errs << a;
        if (a > std::abs(s.worst)) {
            s.worst = error[i];
            s.worstId = r.id;
        }
    }
    s.n = int(errs.size());
    if (errs.isEmpty())
        return s;
    s.median = median(errs);
    for (double a : errs) {
        s.within10 += a <= 0.10;
        s.within15 += a <= 0.15;
        s.within20 += a <= 0.20;
    }
    s.within10 /= errs.size();
    s.within15 /= errs.size();
    s.within20 /= errs.size();
    return s;
}

// Issue 19's measures on sections 3, 3b and 3d, guarded where they stand today (no constant is
// fitted to training runs, so the two are the same).
constexpr double kAllFittedMedian = 0.045;      // 3.9% today
constexpr double kAllOutOfSampleMedian = 0.045; // 3.9% today
constexpr double kBandCoverage = 0.80;          // the band's claim

// A family priced out of sample whose miss is found and not yet explained: its residuals widen
// the bands of the regimes it belongs to (resources/fidelity.json), its rows count in the
// coverage, and the 80% claim is checked on the others as well, said apart
// (tests/data/throughput/README.md, family U).
bool unexplained(const QChar family)
{
    return family == QLatin1Char('U');
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
                                   r.stack,
                                   r.heldOut);
        };
        if (regime(a) != regime(b))
            out += "\n  run " + std::to_string(i) + " " + b.id + ": regime differs (file: " + a.id
                   + ", " + a.architecture + " " + a.precision + ", " + std::to_string(a.gpus)
                   + " GPUs)";
        else if (!(std::abs(a.error - b.error) <= kResidualTolerance))
            out += "\n  " + b.id + ": error " + std::to_string(a.error) + " in the file, "
                   + std::to_string(b.error) + " from the model";
        else if (!(std::abs(a.fittedError - b.fittedError) <= kResidualTolerance))
            out += "\n  " + b.id + ": fitted error " + std::to_string(a.fittedError)
                   + " in the file, " + std::to_string(b.fittedError) + " from the model";
    }
    return out;
}

} // namespace

class TestThroughput : public QObject
{
    Q_OBJECT

    QList<Run> m_runs;
    QList<Priced> m_priced;
    QList<double> m_fitted; // per run: the error with the built-in constants (in sample)
    CrossValidation m_cv;   // per run: the out-of-sample error (families 3/3b/3d, not Z)
    // Per key: the catalog's efficiency and the one that fits every run.
    QMap<QString, std::pair<double, double>> m_allRunsFit;

    bool crossValidated(int i) const { return inPart(m_runs[i], Part::All); }
    // The index of run `id` in m_runs (a missing run stops the test).
    int runIndex(const char *id) const
    {
        for (int i = 0; i < m_runs.size(); ++i)
            if (m_runs[i].id == QLatin1String(id))
                return i;
        qFatal("no run %s", id);
        return -1;
    }

    // The residuals resources/fidelity.json holds, as the model gives them now (every run:
    // sections 3, 3b and 3d and the extra families; errors not rounded).
    std::vector<ValidationRun> residuals() const
    {
        std::vector<ValidationRun> out;
        for (int i = 0; i < m_runs.size(); ++i) {
            const Run &r = m_runs[i];
            ValidationRun v;
            v.id = r.id.toStdString();
            v.architecture = Catalog::builtin().gpu(gpuFor(r))->architecture;
            v.precision = r.precision.toStdString();
            v.gpus = r.gpus;
            v.moe = r.ep > 1;
            v.zero3 = r.shard == QLatin1String("z3") || r.shard == QLatin1String("fsdp");
            v.contextParallel = r.cp > 1;
            v.stack = r.stack == QLatin1String("generic") ? std::string() : r.stack.toStdString();
            v.heldOut = r.heldOut;
            // Nothing is fitted to training runs, so an extra run's error as priced is out of
            // sample too.
            v.error = crossValidated(i) ? m_cv.error[i] : m_fitted[i];
            v.fittedError = m_fitted[i];
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
            if (!v.stack.empty())
                o[QStringLiteral("stack")] = QString::fromStdString(v.stack);
            o[QStringLiteral("held_out")] = v.heldOut;
            o[QStringLiteral("error")] = std::round(v.error * 10000) / 10000;
            o[QStringLiteral("fitted_error")] = std::round(v.fittedError * 10000) / 10000;
            runs.append(o);
        }
        QJsonObject doc;
        doc[QStringLiteral("format")] = QStringLiteral("railyard-fidelity");
        doc[QStringLiteral("notes")] = QStringLiteral(
                "Residuals of the engine against every published run of "
                "tests/data/throughput/runs.txt (the reference throughput.md sections 3, 3b and "
                "3d, the model zoo's family Z, MLPerf v5.0's family L, torchtitan's family T, "
                "Megatron-Bridge's Blackwell family W): "
                "error = "
                "(model - measured) / measured tokens/s/GPU out of sample, fitted_error the same "
                "with the catalog's constants: since no constant is fitted to training runs (the "
                "GEMM and attention efficiencies come from kernel tables, tests/data/kernels), "
                "the two are equal. Generated by "
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
        for (const Run &r : m_runs) {
            m_priced << price(r);
            m_fitted << m_priced.back().err;
        }
        const auto in = [this](int i) { return crossValidated(i); };
        const EfficiencyCurves curves(m_runs, in);
        m_cv = leaveOneSourceOut(m_runs, curves, in, m_fitted);
        m_allRunsFit.clear();
        for (int i = 0; i < m_runs.size(); ++i) {
            if (!in(i))
                continue;
            const FitKey key = fitKey(m_runs[i]);
            if (!m_allRunsFit.contains(key.name()))
                m_allRunsFit[key.name()] = {builtInEfficiency(key),
                                            fitEfficiency(m_runs, curves, key, in)};
        }
        // RAILYARD_WRITE_RESIDUALS=resources/fidelity.json: write the residuals the engine's
        // uncertainty band is taken from (sections 3, 3b and 3d, out of sample).
        const QByteArray out = qgetenv("RAILYARD_WRITE_RESIDUALS");
        if (!out.isEmpty())
            writeResiduals(QString::fromLocal8Bit(out));
        // RAILYARD_WRITE_LAYOUTS=DIR: each run as the layout the engine prices (DIR/ID.railyard.json),
        // to look at one with `railyard evaluate` or in the app.
        const QByteArray layouts = qgetenv("RAILYARD_WRITE_LAYOUTS");
        if (!layouts.isEmpty())
            for (const Run &r : std::as_const(m_runs))
                writeLayoutFile(layoutFor(r),
                                QString::fromLocal8Bit(layouts).toStdString() + "/"
                                        + r.id.toStdString() + ".railyard.json");
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
        qInfo("%-8s %-9s tok/s/GPU %8.1f measured %8.1f error %+6.1f%% (out of sample %+6.1f%%) "
              "| step %7.3f s: compute "
              "%.3f tp %.3f cp %.3f ep %.3f bubble %.3f p2p %.3f dp %.3f opt %.3f | %.1f GiB of "
              "%.1f | MFU %.1f%%",
              qPrintable(r.id),
              extra(r)      ? "(extra)"
              : r.heldOut   ? "(held)"
              : r.section3d ? "(3d)"
                            : "",
              e.tokensPerSPerGpu,
              r.measuredTokens,
              100 * err,
              100 * (crossValidated(index) ? m_cv.error[index] : err),
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
        // Section 3d: released after the engine was measured on it, with misses the issue
        // names (K2/K3 priced slow): a looser guard until their mechanisms are priced.
        // Family P (NeMo 24.03 long-context CP) ran FlashAttention-2: the NeMo launcher of
        // that container set NVTE_FUSED_ATTN=0 (runs.txt, flag fa2); priced so, within 4%.
        // Family Z: model-zoo MoE runs with hundreds of micro-batches; dropless routing is priced
        // (48% and 104% fast before, 22% and 54% now): the rest is the token dispatcher's host
        // side, not priced; held at 60%. Family L: MLPerf v5.0 Llama 3.1 405B; GB200 (L6, L7)
        // is priced about a third fast (tests/data/throughput/README.md, "Known misses"); 60%.
        // Family T: torchtitan's own runs, up to 59% fast (CP 4 and 8 on one host; README):
        // FlashAttention-2's backward at the kernel tables' rate (0.34 of the peak, the
        // FlashAttention-3 paper's rows) leaves its long-sequence rows faster than measured,
        // which nothing priced explains yet; held at 62%.
        // Family O: llm-foundry's MPT runs, up to 35% fast (FlashAttention-2 at 128-512 H100;
        // README, "Family O"): 60%.
        // Family W: Megatron-Bridge 25.11 on GB300, GB200 and B200; its MoE rows at one
        // micro-batch on B200 (all-to-all dispatcher) run 1.7-2.3x the priced step with the
        // host's launches priced (step/hostlaunch.h; 1.9-3.4x before; README, "Known misses"):
        // held at 135%.
        // MoE under FSDP (I3: Megatron-FSDP, expert weights gathered over their data-parallel
        // ranks): priced 17% slow before, 34% since Hopper's GEMMs pay for running beside the
        // hidden gathers (the expert gathers' hidden time is long): held at 40%.
        const bool moeFsdp = r.ep > 1 && r.shard == QLatin1String("fsdp");
        const bool wMoe = r.family == QLatin1Char('W') && r.ep > 1; // MoE, as residuals() says
        const double bound = wMoe                           ? 1.35
                             : moeFsdp                      ? 0.40
                             : r.family == QLatin1Char('T') ? 0.62
                             : r.section3d || extra(r)      ? 0.60
                             : r.heldOut                    ? 0.40
                                                            : 0.30;
        QVERIFY2(std::abs(err) <= bound, qPrintable(QString::number(100 * err, 'f', 1) + "%"));
    }

    // Median |error| and the share within 10%, 15% and 20%, with the catalog's constants (in
    // sample) and out of sample, by part.
    void summary()
    {
        const std::pair<Part, const char *> parts[]
                = {{Part::Fitted, "fitted (3/3b)"},
                   {Part::HeldOut, "held out (3/3b)"},
                   {Part::Section3d, "section 3d"},
                   {Part::Extra, "families Z, L, T, W, O, R, N, H, Y, U (extra)"},
                   {Part::All, "all (3/3b/3d)"}};
        QMap<Part, Summary> in, out;
        for (const auto &[part, name] : parts) {
            in[part] = summarize(m_runs, m_fitted, part);
            out[part] = summarize(m_runs, m_cv.error, part);
            for (const auto &[kind, s] :
                 {std::pair{"in sample", in[part]}, std::pair{"out of sample", out[part]}}) {
                if (!s.n)
                    continue;
                qInfo("%-17s %-13s %2d runs: median |error| %4.1f%%, within 10%% %3.0f%%, 15%% "
                      "%3.0f%%, 20%% %3.0f%%, worst %s %+.1f%%",
                      name,
                      kind,
                      s.n,
                      100 * s.median,
                      100 * s.within10,
                      100 * s.within15,
                      100 * s.within20,
                      qPrintable(s.worstId),
                      100 * s.worst);
            }
        }
        QCOMPARE(in[Part::Fitted].n + in[Part::HeldOut].n, 62);
        QCOMPARE(in[Part::Section3d].n, 18);
        // Sections 3 and 3b with the catalog's constants (from kernel tables since issue 19):
        // 4.2% and 45 of 49 within 15% on the runs once fitted; the held-out ones 9.7% and 8 of
        // 13 (small dense models E1, E2 and FP8 runs F8, F9, G6 priced fast, B7 ZeRO-3). Asserted:
        // what is reached, with a little room.
        QVERIFY2(in[Part::Fitted].median <= 0.047, "fitted median");
        QVERIFY2(in[Part::Fitted].within15 >= 0.91, "fitted share within 15%");
        QVERIFY2(in[Part::HeldOut].median <= 0.10, "held-out median");
        QVERIFY2(in[Part::HeldOut].within15 >= 0.61, "held-out share within 15%");
        // Issue 19's goals on 3, 3b and 3d together: median at most 6% fitted and 9% out of
        // sample. Both met: 3.9% (in sample and out of sample are one since nothing is fitted).
        QVERIFY2(in[Part::All].median <= kAllFittedMedian, "median over 3/3b/3d, in sample");
        QVERIFY2(out[Part::All].median <= kAllOutOfSampleMedian,
                 "median over 3/3b/3d, out of sample");
        // The families beyond the reference sections (Z, L, T, W): 15.9% and 65% within 20%.
        // The Grace-Blackwell clocks of a tray whose GPUs all run took them from 15.9% to
        // 12.1%; FlashAttention-2's backward at its kernel rate took torchtitan's rows (family
        // T) back up (tests/data/throughput/README.md). A regression guard with a little room.
        QVERIFY2(in[Part::Extra].median <= 0.165, "median over families Z, L, T, W");
        QVERIFY2(in[Part::Extra].within20 >= 0.63, "families Z, L, T, W within 20%");
    }

    // Leave-one-source-out, family by family: the refit GEMM efficiencies and what the held
    // family's runs are then off by; and the efficiencies every run together gives, beside the
    // catalog's.
    void crossValidation()
    {
        QMap<QChar, QList<int>> byFamily;
        for (int i = 0; i < m_runs.size(); ++i)
            if (crossValidated(i))
                byFamily[m_runs[i].family] << i;
        for (auto it = byFamily.cbegin(); it != byFamily.cend(); ++it) {
            QList<double> in, out;
            for (int i : it.value()) {
                in << std::abs(m_fitted[i]);
                out << std::abs(m_cv.error[i]);
            }
            QStringList refits;
            const QMap<QString, double> &r = m_cv.refits.value(it.key());
            for (auto k = r.cbegin(); k != r.cend(); ++k)
                refits << QStringLiteral("%1 %2").arg(k.key()).arg(k.value(), 0, 'f', 3);
            qInfo("family %c held out: %2lld runs, median |error| in sample %5.1f%%, out of "
                  "sample %5.1f%%; what the other families would fit (not used): %s",
                  it.key().toLatin1(),
                  qint64(it.value().size()),
                  100 * median(in),
                  100 * median(out),
                  qPrintable(refits.join(QStringLiteral(", "))));
        }
        for (auto it = m_allRunsFit.cbegin(); it != m_allRunsFit.cend(); ++it)
            qInfo("%-16s kernel tables (catalog) %.3f; every training run fitted together would "
                  "give %.3f",
                  qPrintable(it.key()),
                  it.value().first,
                  it.value().second);
        // Every cross-validated run has its out-of-sample error. No constant is fitted to
        // training runs (the GEMM efficiencies come from tests/data/kernels), so it is the
        // run's error as priced, with the catalog's efficiency.
        for (int i = 0; i < m_runs.size(); ++i) {
            if (!crossValidated(i))
                continue;
            QVERIFY2(!std::isnan(m_cv.error[i]), qPrintable(m_runs[i].id));
            QVERIFY(!trainingFitted(fitKey(m_runs[i])));
            QCOMPARE(m_cv.error[i], m_fitted[i]);
            QCOMPARE(m_cv.refit[i], builtInEfficiency(fitKey(m_runs[i])));
        }
        // The refit is a fit: on every run together it lands within the grid, and pricing at
        // the catalog's value through the curves gives the direct evaluation's error.
        for (auto it = m_allRunsFit.cbegin(); it != m_allRunsFit.cend(); ++it) {
            QVERIFY(it.value().second > EfficiencyCurves::kLow);
            QVERIFY(it.value().second
                    < EfficiencyCurves::kLow
                              + (EfficiencyCurves::kPoints - 1) * EfficiencyCurves::kStep);
        }
    }

    // The printed band must hold what it claims on runs it never saw: each run's band is taken
    // from the out-of-sample residuals of the other families only, and it holds the run when
    // the run's own out-of-sample |error| is inside it (|model - measured| / model step time
    // equals |error| in tokens/s: measured step = model step x (1 + error)).
    void bandCoverage()
    {
        const std::vector<ValidationRun> all = residuals();
        int held = 0, n = 0, heldExplained = 0, nExplained = 0;
        QStringList missed;
        QList<double> unexplainedErrors;
        for (const ValidationRun &v : all) {
            std::vector<ValidationRun> others;
            for (const ValidationRun &o : all)
                if (o.id[0] != v.id[0])
                    others.push_back(o);
            Regime g;
            g.architecture = v.architecture;
            g.precision = v.precision;
            g.gpus = v.gpus;
            g.moe = v.moe;
            g.zero3 = v.zero3;
            g.contextParallel = v.contextParallel;
            g.stack = v.stack;
            const UncertaintyBand band = uncertaintyBand(g, others);
            const bool in = std::abs(v.error) <= band.fraction;
            ++n;
            held += in;
            if (unexplained(QChar::fromLatin1(v.id[0])))
                unexplainedErrors.push_back(v.error);
            else {
                ++nExplained;
                heldExplained += in;
            }
            if (!in)
                missed << QStringLiteral("%1 %2% outside ±%3%")
                                  .arg(QString::fromStdString(v.id))
                                  .arg(100 * v.error, 0, 'f', 1)
                                  .arg(100 * band.fraction, 0, 'f', 1);
        }
        qInfo("the band held %d of %d runs it never saw (%.0f%%); without family U (found "
              "2026-12-07, its miss partly explained) %d of %d (%.0f%%); missed: %s",
              held,
              n,
              100.0 * held / n,
              heldExplained,
              nExplained,
              100.0 * heldExplained / nExplained,
              qPrintable(missed.join(QStringLiteral("; "))));
        QVERIFY2(double(held) / n >= kBandCoverage, "band coverage on unseen families");
        QVERIFY2(double(heldExplained) / nExplained >= kBandCoverage,
                 "band coverage on unseen families, family U apart");
        // Family U (Megatron-LM on one DGX B200 node) is priced 4-22% fast, every run (15-29%
        // before attention dropout was priced): a known miss, pinned so that it cannot grow or
        // vanish unnoticed.
        QCOMPARE(int(unexplainedErrors.size()), 26);
        const double m = median(unexplainedErrors);
        QVERIFY2(m > 0.06 && m < 0.18, qPrintable(QString::number(m)));
        QVERIFY(*std::min_element(unexplainedErrors.begin(), unexplainedErrors.end()) > 0.02);
    }

    // Every uncertainty band comes from resources/fidelity.json: it must hold what the model
    // gives now. The file keeps four decimals, so a current file is within half of the last
    // one of the model (kResidualTolerance, with room for rounding at a tie).
    void fidelityFileIsCurrent()
    {
        const std::vector<ValidationRun> model = residuals();
        QCOMPARE(model.size(), std::size_t(m_runs.size()));
        // 80 of sections 3/3b/3d, 13 of Z, 7 of L, 26 of T, 22 of W, 36 of O, 10 of R, 3 of N,
        // 2 of H, 2 of Y, 26 of U
        QCOMPARE(model.size(), std::size_t(227));
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
        off[3].stack += "-other"; // the stack a run was priced with sets its band too
        QVERIFY(staleness(off, model).find(file[3].id + ": regime") != std::string::npos);
        off = file;
        off.pop_back();
        QVERIFY(staleness(off, model)
                        .find(std::to_string(model.size() - 1) + " runs; the model prices "
                              + std::to_string(model.size()))
                != std::string::npos);
    }

    // Memory per GPU, a part checked on its own: the engine's peak (the largest stage's) against
    // what the source reports (flag mem:GiB; torchtitan logs the caching allocator's peak
    // reserved memory, the maximum over GPUs).
    void memoryPerGpu()
    {
        QList<double> errs, later;
        for (int i = 0; i < m_runs.size(); ++i) {
            const Run &r = m_runs[i];
            if (r.measuredMemGiB <= 0)
                continue;
            const MemoryBreakdown &m = m_priced[i].e.memory;
            const double err = (m.totalGiB() - r.measuredMemGiB) / r.measuredMemGiB;
            (r.family == QLatin1Char('Y') ? later : errs) << std::abs(err);
            qInfo("%-4s memory measured %5.1f GiB, engine %6.1f (%+5.1f%%): weights %.1f grads "
                  "%.1f optimizer %.1f activations %.1f other %.1f",
                  qPrintable(r.id),
                  r.measuredMemGiB,
                  m.totalGiB(),
                  100 * err,
                  m.weightsGiB,
                  m.gradientsGiB,
                  m.optimizerGiB,
                  m.activationsGiB,
                  m.otherGiB);
        }
        QCOMPARE(errs.size(), 18);
        // Family Y (torchtitan of June 2025 on H200): the 8B at T3's local batch, policy,
        // compile and float8 measured 76.8 GiB on 8 GPUs in December 2024 (priced -1%) and 48.0
        // on 32 in June 2025, where sharding four times wider frees ~13 GiB: the other ~16 GiB
        // are the loss's FP32 logits, which torchtitan compiles away from April 2025
        // (bbb1b616e) and the stack, December 2024's code, keeps (+30%, +28%;
        // tests/data/throughput/README.md, family Y). A regression guard, apart.
        QCOMPARE(later.size(), 2);
        QVERIFY2(*std::max_element(later.begin(), later.end()) <= 0.35, "family Y memory");
        // What is reached (2026-12-06: 10.4%, worst T11 -26.1%), with a little room: before
        // torchtitan's pipeline FSDP, selective policy and loss were priced, 39.5% and -58.6%.
        QVERIFY2(median(errs) <= 0.12, "memory median");
        QVERIFY2(*std::max_element(errs.begin(), errs.end()) <= 0.30, "memory worst");
        qInfo("memory: median |error| %.1f%% over %lld runs",
              100 * median(errs),
              qint64(errs.size()));

        // What PyTorch's allocator held for tensors at its peak (flag memalloc; family U:
        // Megatron-LM's max_memory_allocated on rank 0) against the engine's tensors alone: its
        // weights, gradients, optimizer states and activations, without the framework's and
        // the allocator's share (otherGiB).
        QList<double> allocErrs;
        for (int i = 0; i < m_runs.size(); ++i) {
            const Run &r = m_runs[i];
            if (r.measuredAllocGiB <= 0)
                continue;
            const MemoryBreakdown &m = m_priced[i].e.memory;
            const double tensors = m.totalGiB() - m.otherGiB;
            const double err = (tensors - r.measuredAllocGiB) / r.measuredAllocGiB;
            allocErrs << std::abs(err);
            qInfo("%-4s allocated measured %5.1f GiB, engine %6.1f (%+5.1f%%): weights %.1f grads "
                  "%.1f optimizer %.1f activations %.1f",
                  qPrintable(r.id),
                  r.measuredAllocGiB,
                  tensors,
                  100 * err,
                  m.weightsGiB,
                  m.gradientsGiB,
                  m.optimizerGiB,
                  m.activationsGiB);
        }
        QCOMPARE(allocErrs.size(), 22);
        qInfo("allocated memory: median |error| %.1f%% over %lld runs, worst %.1f%%",
              100 * median(allocErrs),
              qint64(allocErrs.size()),
              100 * *std::max_element(allocErrs.begin(), allocErrs.end()));
        // What is reached (2026-12-07: 2.8%, worst U19 -8.0%), with a little room: before
        // Megatron-Core's loss was priced at its FP32 softmax (4 bytes a logit, not 8) and
        // Transformer Engine's cached FP8 weights (a byte per parameter), 5.1% and +18.0% (U11).
        QVERIFY2(median(allocErrs) <= 0.04, "allocated memory median");
        QVERIFY2(*std::max_element(allocErrs.begin(), allocErrs.end()) <= 0.10,
                 "allocated memory worst");
    }

    // The Grand Teton H100's sustained clock at 500 W is measured on that board's GEMMs
    // (publishedruns.cpp, catalogFor; tst_kernels::grandTetonClockFromKernels): family T's
    // errors at the 700 W part's clock (1.0), at the source's bracket (0.922, its middle, the
    // value assumed before the GEMM rows; 0.844, the H100 NVL's peak ratio) and at the measured
    // clock.
    void grandTetonClock()
    {
        for (double scale : {1.0, 0.922, 0.844, kGrandTetonClock}) {
            QList<double> errs;
            QStringList each;
            for (const Run &r : std::as_const(m_runs)) {
                if (r.family != QLatin1Char('T'))
                    continue;
                const double e = price(r, Catalog::builtin(), scale).err;
                errs << std::abs(e);
                each << QStringLiteral("%1 %2%").arg(r.id).arg(100 * e, 0, 'f', 1);
            }
            qInfo("clock x%.3f: family T median |error| %.1f%%: %s",
                  scale,
                  100 * median(errs),
                  qPrintable(each.join(QStringLiteral(", "))));
            QCOMPARE(errs.size(), 26);
        }
    }

    // The same scripts on two GPU generations (IBM fms-fsdp, family R: the 7B, 13B, 34B and 70B
    // on 128 A100 and on 96 H100): how much faster the H100 ran, measured and priced. PyTorch's
    // FSDP hides its gathers and reduce-scatters behind the compute on both; only Hopper's
    // persistent GEMMs pay for it (steptimes.cpp, persistentGemmOverlapLoss), which took the
    // priced ratios from 2.50-2.73 (measured 2.03-2.21) to within 8%.
    void hopperOverAmpereSameScripts()
    {
        for (const auto &[a100, h100] : {std::pair{"R1", "R5"},
                                         std::pair{"R2", "R6"},
                                         std::pair{"R3", "R7"},
                                         std::pair{"R4", "R8"}}) {
            const int a = runIndex(a100), h = runIndex(h100);
            const double measured = m_runs[h].measuredTokens / m_runs[a].measuredTokens;
            const double priced = m_priced[h].e.tokensPerSPerGpu / m_priced[a].e.tokensPerSPerGpu;
            qInfo("%s -> %s: H100 / A100 measured %.2f, priced %.2f", a100, h100, measured, priced);
            QVERIFY2(std::abs(priced / measured - 1) <= 0.08,
                     qPrintable(QStringLiteral("%1 against %2").arg(priced).arg(measured)));
        }
    }

    // torch.compile, measured on its own: torchtitan ran the same Llama 3.1 8B jobs eager and
    // compiled (T1 / T2 on 8 H100, T8 / T9 on 128), 16% apart. Eager, PyTorch runs each
    // element-wise operation as a kernel of its own (compute.cpp, kEager*); compiled, fused.
    // The priced gap is set by those byte counts alone (no training run fitted): it must show
    // most of the measured one, and no more than all of it.
    void eagerAgainstCompiled()
    {
        for (const auto &[eager, compiled] : {std::pair{"T1", "T2"}, std::pair{"T8", "T9"}}) {
            const int e = runIndex(eager), c = runIndex(compiled);
            const double measured = m_runs[c].measuredTokens / m_runs[e].measuredTokens;
            const double priced = m_priced[c].e.tokensPerSPerGpu / m_priced[e].e.tokensPerSPerGpu;
            qInfo("%s -> %s: compiled / eager measured %.3f, priced %.3f",
                  eager,
                  compiled,
                  measured,
                  priced);
            QVERIFY2(priced - 1 > 0.5 * (measured - 1) && priced <= measured,
                     qPrintable(QString::number(priced)));
        }
    }

    // Dropless MoE routing, measured on its own: the model zoo ran Qwen3-235B on 256 H100 at
    // 16k-128k tokens both with --moe-router-force-load-balancing and dropless (same system,
    // same parallel layout; yanring/Megatron-MoE-ModelZoo best_practice/qwen3/readme.md, "Long
    // Context": TFLOPS 295/237, 335/277, 368/320, 389/357). The stack's imbalance is the
    // factor on the busiest rank's routed tokens that gives those ratios (least summed |log
    // error|, within 0.02); none of these pairs is a validation run.
    void moeDroplessImbalance()
    {
        struct Pair
        {
            int seq, cp;
            double forced, dropless;
        };
        const Pair pairs[] = {{16384, 1, 295, 237},
                              {32768, 2, 335, 277},
                              {65536, 4, 368, 320},
                              {131072, 8, 389, 357}};
        const auto run = [](const Pair &p, bool forced) {
            Run r;
            r.id = QStringLiteral("qwen3-lc");
            r.family = QLatin1Char('X');
            r.system = QStringLiteral("ZOO");
            r.model = QStringLiteral("qwen3-235b-a22b");
            r.gpus = 256;
            r.seq = p.seq;
            r.gbs = 256;
            r.mbs = 1;
            r.tp = 4;
            r.pp = 8;
            r.vp = 4;
            r.cp = p.cp;
            r.dp = 256 / (4 * 8 * p.cp);
            r.ep = 8;
            r.shard = QStringLiteral("do");
            r.recompute = QStringLiteral("sel");
            r.sp = true;
            r.precision = QStringLiteral("bf16");
            r.stack = QStringLiteral("megatron-core");
            r.flags = QStringList{QStringLiteral("deepep")};
            if (forced)
                r.flags << QStringLiteral("forcebal");
            r.measuredTokens = 1;
            return r;
        };
        const StackProfile *mcore = findStack("megatron-core");
        QVERIFY(mcore);
        std::vector<double> errors;
        for (const Pair &p : pairs) {
            const double forced = price(run(p, true)).e.stepTimeS;
            const double dropless = price(run(p, false)).e.stepTimeS;
            const double error = (forced / dropless) / (p.dropless / p.forced) - 1;
            errors.push_back(error);
            qInfo("Qwen3-235B %6d tokens, CP %d: dropless / forced throughput measured %.3f, "
                  "engine %.3f (%+.1f%%)",
                  p.seq,
                  p.cp,
                  p.dropless / p.forced,
                  forced / dropless,
                  100 * error);
        }
        // The stack's value (1.95) was chosen by bisection on the pairs: the signed errors'
        // mean is within 1%, and no pair is off by more than 4%.
        double mean = 0;
        for (double e : errors) {
            mean += e / errors.size();
            QVERIFY(std::abs(e) <= 0.04);
        }
        qInfo("megatron-core and nemo: imbalance %.2f, mean error %+.1f%%",
              mcore->moeDroplessImbalance,
              100 * mean);
        QVERIFY(std::abs(mean) <= 0.01);
        QCOMPARE(findStack("nemo")->moeDroplessImbalance, mcore->moeDroplessImbalance);
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
