// Issue 19, point 1 (compute): the engine's ComputeModel against published kernel benchmarks, on
// its own, before anything is composed. Each row of tests/data/kernels/*.csv keeps its source;
// this test prints, per row, the engine's predicted throughput, the measured one and the signed
// error, and the median |error| per GPU and kernel. The bounds are today's medians plus a stated
// margin, so a regression fails. The catalog's efficiencies are the ones these rows give
// (catalogFromKernels), not fits to training runs.
#include "layout/catalog.h"
#include "layout/softwarestack.h"
#include "layout/transformer.h"
#include "step/compute.h"
#include "step/stepcost.h"

#include "comparenear.h"
#include "throughput/publishedruns.h"

#include <QFile>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

using namespace railyard::engine;

namespace {

// The data rows of a CSV under tests/data/kernels (comments and the header skipped); a row with
// another number of columns fails the test that reads it.
QList<QStringList> readCsv(const QString &name, int columns)
{
    QList<QStringList> out;
    QFile f(QStringLiteral(RAILYARD_TEST_DATA "/kernels/") + name);
    if (!f.open(QIODevice::ReadOnly | QIODevice::Text))
        qFatal("cannot read %s", qPrintable(f.fileName()));
    bool header = true;
    int line = 0;
    while (!f.atEnd()) {
        const QString text = QString::fromUtf8(f.readLine()).trimmed();
        ++line;
        if (text.isEmpty() || text.startsWith('#'))
            continue;
        if (header) {
            header = false;
            continue;
        }
        const QStringList c = text.split(',');
        if (c.size() != columns)
            qFatal("%s:%d: expected %d columns", qPrintable(name), line, columns);
        out.push_back(c);
    }
    return out;
}

double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

const GpuSpec &gpuOf(const QString &id)
{
    const GpuSpec *g = Catalog::builtin().gpu(id.toStdString());
    if (!g)
        qFatal("no GPU %s in the catalog", qPrintable(id));
    return *g;
}

// Prints the median |error| and the signed range of each group and checks it against `bound`
// (every group must have one).
void checkGroups(const std::map<QString, std::vector<double>> &errors,
                 const std::map<QString, double> &bound)
{
    std::map<QString, double> medians;
    for (const auto &[group, errs] : errors) {
        std::vector<double> abs;
        for (double e : errs)
            abs.push_back(std::abs(e));
        medians[group] = median(abs);
        qInfo("%-28s %3zu rows: median |error| %5.1f%%, signed %+6.1f%% .. %+6.1f%%",
              qPrintable(group),
              errs.size(),
              100 * medians[group],
              100 * *std::min_element(errs.begin(), errs.end()),
              100 * *std::max_element(errs.begin(), errs.end()));
    }
    for (const auto &[group, med] : medians) {
        QVERIFY2(bound.count(group), qPrintable(group + " has no stated bound"));
        QVERIFY2(med <= bound.at(group),
                 qPrintable(QStringLiteral("%1: median |error| %2 > %3")
                                    .arg(group)
                                    .arg(med)
                                    .arg(bound.at(group))));
    }
}

struct GemmRow
{
    QString gpu, library, dtype;
    double m = 0, n = 0, k = 0, measuredTflops = 0;
    bool sustained() const { return library.endsWith(QLatin1String("-sustained")); }
    // float8_experimental's Llama 2 70B shapes on a 2023 PyTorch: validation only.
    bool trainingShapes2023() const { return library.endsWith(QLatin1String("-2023")); }
    // FBGEMM's benchmark on a board it labels "H100 500W": validation of that board's clock.
    bool board500W() const { return library.endsWith(QLatin1String("-500w")); }
    // Rows the catalog's efficiencies are not fitted to: another board or another era.
    bool validationOnly() const { return trainingShapes2023() || board500W(); }
    QString group() const
    {
        return gpu + QLatin1Char('/') + dtype
               + (sustained()                            ? QStringLiteral(" sustained")
                  : library == QLatin1String("deepgemm") ? QStringLiteral(" deepgemm")
                  : trainingShapes2023()                 ? QStringLiteral(" Llama shapes 2023")
                  : board500W()                          ? QStringLiteral(" 500 W")
                                                         : QString());
    }
};

std::vector<GemmRow> readGemm()
{
    std::vector<GemmRow> rows;
    for (const QStringList &c : readCsv(QStringLiteral("gemm.csv"), 7))
        rows.push_back({c[0],
                        c[1],
                        c[2],
                        c[3].toDouble(),
                        c[4].toDouble(),
                        c[5].toDouble(),
                        c[6].toDouble()});
    return rows;
}

// The engine's TFLOP/s for the GEMM kernel of `r` on `gpu` (FP8 and MXFP8 on the FP8 tensor
// cores), at the benchmark's clock or, `sustained`, at the GPU's sustained training clock.
double gemmTflops(const GpuSpec &gpu, const GemmRow &r, bool sustained)
{
    const bool fp8 = r.dtype != QLatin1String("bf16");
    KernelChoice k;
    k.sustainedClock = sustained;
    const ComputeModel model(gpu, fp8 ? Precision::Fp8 : Precision::Bf16, k);
    return 2.0 * r.m * r.n * r.k / model.gemmKernel(r.m, r.n, r.k, fp8) / 1e12;
}

struct AttentionRow
{
    QString gpu, kernel, pass;
    double batch = 0, heads = 0, kvHeads = 0, seq = 0, headDim = 0;
    bool causal = false;
    double measuredTflops = 0;
    double forwardFlops() const
    {
        return 4.0 * batch * heads * seq * seq * headDim * (causal ? 0.5 : 1.0);
    }
    double passFlops() const
    {
        const double f = forwardFlops();
        return pass == QLatin1String("fwd") ? f : pass == QLatin1String("bwd") ? 2.5 * f : 3.5 * f;
    }
};

std::vector<AttentionRow> readAttention()
{
    std::vector<AttentionRow> rows;
    for (const QStringList &c : readCsv(QStringLiteral("attention.csv"), 11)) {
        AttentionRow r;
        r.gpu = c[0];
        r.kernel = c[1];
        r.pass = c[2];
        r.batch = c[3].toDouble();
        r.heads = c[4].toDouble();
        r.kvHeads = c[5].toDouble();
        r.seq = c[6].toDouble();
        r.headDim = c[7].toDouble();
        r.causal = c[8] == QLatin1String("1");
        const double v = c[9].toDouble();
        const QString unit = c[10];
        r.measuredTflops = unit == QLatin1String("tflops") ? v
                           : unit == QLatin1String("ms")   ? r.passFlops() / (v * 1e-3) / 1e12
                                                           : r.passFlops() / (v * 1e-6) / 1e12;
        rows.push_back(r);
    }
    return rows;
}

ComputeModel attentionModel(const GpuSpec &gpu, const QString &kernel)
{
    KernelChoice k;
    k.sustainedClock = false; // the benchmarks' clock
    if (!attentionKernelFromString(kernel.toStdString(), k.attention))
        qFatal("unknown attention kernel %s", qPrintable(kernel));
    return ComputeModel(gpu, Precision::Bf16, k);
}

// The engine's TFLOP/s for the row's pass (fwd, bwd, or both).
double predictedTflops(const AttentionRow &r)
{
    const ComputeModel m = attentionModel(gpuOf(r.gpu), r.kernel);
    const double f = r.forwardFlops();
    const double fwd = m.attentionForward(f, r.seq, r.causal);
    const double bwd = m.attentionBackward(f, r.seq, r.causal);
    const double s = r.pass == QLatin1String("fwd")   ? fwd
                     : r.pass == QLatin1String("bwd") ? bwd
                                                      : fwd + bwd;
    return r.passFlops() / s / 1e12;
}

} // namespace

class TestKernels : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // Dense GEMM: ComputeModel::gemmKernel(m, n, k) at the benchmark's clock (catalog
    // gemm_efficiency, waves over the SMs in K steps, the tile prologue, the HBM roofline, a
    // launch tail); a *-sustained row at the catalog's sustained clock.
    void gemm()
    {
        const std::vector<GemmRow> rows = readGemm();
        QCOMPARE(int(rows.size()), 46); // the rows of tests/data/kernels/gemm.csv
        std::map<QString, std::vector<double>> errors;
        qInfo("%-13s %-22s %-5s %6s %6s %6s %9s %9s %8s",
              "gpu",
              "library",
              "dtype",
              "m",
              "n",
              "k",
              "engine TF",
              "meas. TF",
              "error");
        for (const GemmRow &r : rows) {
            const GpuSpec &gpu = gpuOf(r.gpu);
            const double predicted = gemmTflops(gpu, r, r.sustained());
            const double error = predicted / r.measuredTflops - 1.0;
            errors[r.group()].push_back(error);
            qInfo("%-13s %-22s %-5s %6.0f %6.0f %6.0f %9.1f %9.1f %+7.1f%%",
                  qPrintable(r.gpu),
                  qPrintable(r.library),
                  qPrintable(r.dtype),
                  r.m,
                  r.n,
                  r.k,
                  predicted,
                  r.measuredTflops,
                  100 * error);
        }
        // Today's medians (printed above) plus 3 points; B200's MXFP8 row (cuBLAS, 8192^3 back
        // to back) at FP8's sustained clock -9.6%: run short, FP8 held the same fraction of its
        // best shape as BF16 did (0.78), where the 60 s loops that set FP8's clock hold 12% less
        // (gemmloops.csv), so the row is printed against a bound, not fitted. DeepGEMM's
        // block-scaled FP8 runs below the per-tensor FP8 the catalog's efficiency is for. float8_experimental's Llama 2 70B
        // shapes (2023): its FP8 rows land within 7% of the catalog's rate, its BF16 rows of the
        // same shapes and run 29-48% below it (0.54-0.61 of peak), most likely on 500 W boards
        // that cap BF16 more than FP8 (tests/data/kernels/README.md): kept apart.
        checkGroups(errors,
                    {{QStringLiteral("A100-SXM-80GB/bf16"), 0.04},
                     {QStringLiteral("H100-SXM/bf16"), 0.06},
                     {QStringLiteral("H100-SXM/bf16 sustained"), 0.04},
                     {QStringLiteral("H100-SXM/fp8"), 0.03},
                     {QStringLiteral("H100-SXM/bf16 Llama shapes 2023"), 0.39},
                     {QStringLiteral("H100-SXM/fp8 Llama shapes 2023"), 0.06},
                     {QStringLiteral("H100-SXM/bf16 500 W"), 0.42},
                     {QStringLiteral("H100-SXM/fp8 500 W"), 0.28},
                     {QStringLiteral("H200-SXM/fp8"), 0.03},
                     {QStringLiteral("H800-SXM/fp8 deepgemm"), 0.16},
                     {QStringLiteral("B200/bf16"), 0.03},
                     {QStringLiteral("B200/bf16 sustained"), 0.03},
                     {QStringLiteral("B200/fp8"), 0.03},
                     {QStringLiteral("B200/mxfp8 sustained"), 0.11},
                     {QStringLiteral("GB200/bf16"), 0.03},
                     {QStringLiteral("GB200/fp8"), 0.03}});
    }

    // The Grand Teton H100's clock (torchtitan's runs, family T: publishedruns.h) from the GEMMs
    // of Meta's 500 W boards: FBGEMM's BF16 rows on a GPU it labels "H100 500W" and
    // float8_experimental's BF16 rows (most likely the same board: tests/data/kernels/README.md),
    // against the 700 W part's rate at the same shapes and a short benchmark's clock. A 500 W
    // limit binds from a GEMM's first milliseconds (the 700 W part draws its own limit), so a
    // short benchmark already runs at the board's sustained clock: kGrandTetonClock is the
    // median ratio over the 700 W part's sustained clock. Their FP8 rows disagree (FBGEMM's
    // row-wise kernel at ~0.8 of the rate, float8_experimental's per-tensor one at ~0.97) and
    // are printed only: FP8 load takes the chip's BF16 clock, as on every Hopper part.
    void grandTetonClockFromKernels()
    {
        const GpuSpec &h100 = gpuOf(QStringLiteral("H100-SXM"));
        std::map<QString, std::vector<double>> ratios;
        for (const GemmRow &r : readGemm())
            if (r.gpu == QLatin1String("H100-SXM") && r.validationOnly())
                ratios[r.dtype].push_back(r.measuredTflops / gemmTflops(h100, r, false));
        QCOMPARE(int(ratios[QStringLiteral("bf16")].size()), 11);
        const double bf16 = median(ratios[QStringLiteral("bf16")]);
        const double fp8 = median(ratios[QStringLiteral("fp8")]);
        qInfo("500 W H100 against the 700 W part's short-benchmark rate: BF16 %.3f (%zu rows), "
              "FP8 %.3f (%zu rows); over its sustained clock %.3f: BF16 %.3f, FP8 %.3f; "
              "kGrandTetonClock %.3f",
              bf16,
              ratios[QStringLiteral("bf16")].size(),
              fp8,
              ratios[QStringLiteral("fp8")].size(),
              h100.sustainedClock,
              bf16 / h100.sustainedClock,
              fp8 / h100.sustainedClock,
              railyard::test::kGrandTetonClock);
        QVERIFY2(std::abs(bf16 / h100.sustainedClock - railyard::test::kGrandTetonClock) <= 0.005,
                 qPrintable(QString::number(bf16 / h100.sustainedClock)));
    }

    // The catalog's GEMM efficiencies are the kernel rows' (each GPU and precision: the value
    // that prices its benchmark-clock rows best, least summed |log error|), within 0.01; no
    // training run sets them. GPUs without rows take a measured sibling's value, said here.
    void catalogFromKernels()
    {
        const std::vector<GemmRow> rows = readGemm();
        std::map<QString, std::vector<GemmRow>> groups;
        for (const GemmRow &r : rows)
            if (!r.sustained() && r.library != QLatin1String("deepgemm")
                && r.dtype != QLatin1String("mxfp8") && !r.validationOnly())
                groups[r.group()].push_back(r);
        std::map<QString, double> fitted;
        for (const auto &[group, list] : groups) {
            GpuSpec gpu = gpuOf(list.front().gpu);
            const bool fp8 = list.front().dtype != QLatin1String("bf16");
            double best = 1e300, bestEff = 0;
            for (double eff = 0.30; eff <= 1.0001; eff += 0.001) {
                (fp8 ? gpu.gemmEfficiencyFp8 : gpu.gemmEfficiencyBf16) = eff;
                double loss = 0;
                for (const GemmRow &r : list)
                    loss += std::abs(std::log(gemmTflops(gpu, r, false) / r.measuredTflops));
                if (loss < best) {
                    best = loss;
                    bestEff = eff;
                }
            }
            const GpuSpec &cat = gpuOf(list.front().gpu);
            const double inCatalog = fp8 ? cat.gemmEfficiencyFp8 : cat.gemmEfficiencyBf16;
            fitted[group] = bestEff;
            qInfo("%-22s %2zu rows: kernel efficiency %.3f, catalog %.3f",
                  qPrintable(group),
                  list.size(),
                  bestEff,
                  inCatalog);
            QVERIFY2(std::abs(inCatalog - bestEff) <= 0.01, qPrintable(group));
        }
        // Siblings: H800 and H200 are H100's silicon (the MAMF table: "H200 is the same" in
        // BF16); GB300 has no published GEMM row, GB200's is used.
        const auto eff = [](const char *id, bool fp8) {
            const GpuSpec &g = gpuOf(QString::fromLatin1(id));
            return fp8 ? g.gemmEfficiencyFp8 : g.gemmEfficiencyBf16;
        };
        QCOMPARE(eff("H800-SXM", false), eff("H100-SXM", false));
        QCOMPARE(eff("H800-SXM", true), eff("H100-SXM", true));
        QCOMPARE(eff("H200-SXM", false), eff("H100-SXM", false));
        QCOMPARE(eff("GB300", false), eff("GB200", false));
        QCOMPARE(eff("GB300", true), eff("GB200", true));
    }

    // The clock under FP8 load (GpuSpec::sustainedClockFp8) is the chip's: a step whose GEMMs
    // run in FP8 runs all its tensor-core work at it, BF16 attention included; a BF16 step
    // keeps the BF16 clock; the benchmark clock ignores both.
    void fp8LoadClock()
    {
        GpuSpec g = gpuOf(QStringLiteral("H100-SXM"));
        const double n = 8192, flops = 4.0 * 4 * 16 * 8192.0 * 8192 * 128;
        const auto times = [&](Precision p, bool sustained) {
            KernelChoice k;
            k.sustainedClock = sustained;
            const ComputeModel m(g, p, k);
            return std::pair{m.gemmKernel(n, n, n, p == Precision::Fp8),
                             m.attentionForward(flops, 8192, true)};
        };
        const auto fp8 = times(Precision::Fp8, true), bf16 = times(Precision::Bf16, true),
                   bench = times(Precision::Fp8, false);
        g.sustainedClockFp8 = 0.8 * g.sustainedClock;
        const auto fp8Slow = times(Precision::Fp8, true);
        RAILYARD_COMPARE_NEAR(fp8Slow.first, fp8.first / 0.8, 0.02);
        RAILYARD_COMPARE_NEAR(fp8Slow.second, fp8.second / 0.8, 0.02);
        QCOMPARE(times(Precision::Bf16, true), bf16);
        QCOMPARE(times(Precision::Fp8, false), bench);
    }

    // The catalog's sustained clocks are the clock measurements' (tests/data/kernels/clocks.csv):
    // per GPU and load precision, the throughput ratio of the same kernel short and sustained
    // where one was measured, else the SM clock ratio, within 0.01. GPUs and precisions without a
    // measurement take a measured sibling's value, said here.
    void sustainedClockFromMeasurements()
    {
        const QList<QStringList> rows = readCsv(QStringLiteral("clocks.csv"), 5);
        QCOMPARE(int(rows.size()), 5); // the rows of clocks.csv
        std::map<QString, double> byThroughput, byClock, byAttention;
        for (const QStringList &c : rows) {
            const double ratio = c[4].toDouble() / c[3].toDouble();
            QVERIFY2(ratio > 0.3 && ratio <= 1.0, qPrintable(c.join(',')));
            (c[2] == QLatin1String("throughput")  ? byThroughput
             : c[2] == QLatin1String("attention") ? byAttention
                                                  : byClock)[c[0] + '/' + c[1]]
                    = ratio;
        }
        const auto clockOf = [](const QString &gpu, const QString &load) {
            const GpuSpec &g = gpuOf(gpu);
            return load == QLatin1String("fp8") ? g.sustainedClockFp8 : g.sustainedClock;
        };
        std::map<QString, double> measured = byClock;
        for (const auto &[key, ratio] : byThroughput)
            measured[key] = ratio;
        // Measured but not adopted: Hopper under FP8 load (0.795). Priced with it, the FP8
        // training runs land near their measured rates (F rows 10-21% fast become -7..+9%; every
        // FP8 run together would fit the kernel tables' efficiency), but the band's coverage of
        // unseen families falls from 66 to 63 of 80 (tests/data/throughput/README.md, "Known
        // misses"): FP8 load takes the BF16 clock until that is resolved.
        const QString withheld = QStringLiteral("H100-SXM/fp8");
        for (const auto &[key, ratio] : measured) {
            const QString gpu = key.section('/', 0, 0), load = key.section('/', 1, 1);
            qInfo("%-18s measured %.3f (%s), catalog %.3f%s",
                  qPrintable(key),
                  ratio,
                  byThroughput.count(key) ? "throughput" : "clock",
                  clockOf(gpu, load),
                  key == withheld ? " (not adopted)" : "");
            if (key == withheld)
                QCOMPARE(clockOf(gpu, load), clockOf(gpu, QStringLiteral("bf16")));
            else
                QVERIFY2(std::abs(clockOf(gpu, load) - ratio) <= 0.01, qPrintable(key));
        }
        // B200 under BF16 load: FlashAttention-4's throughput fell less than the SM clock (0.85
        // against 0.80), the GEMMs as far as the clock. Three square GEMMs run back to back on a
        // 1,000 W B200 (gemm.csv, torch-mm-sustained: power-bound from their first milliseconds,
        // as the 60 s loop is) hold the clock's ratio of the engine's rate at the benchmark clock:
        // the catalog takes the clock, which they confirm; attention's own ratio is printed only.
        const double attention = byAttention.at(QStringLiteral("B200/bf16"));
        const GpuSpec &b200 = gpuOf(QStringLiteral("B200"));
        std::vector<double> gemmRatios;
        for (const GemmRow &r : readGemm())
            if (r.gpu == QLatin1String("B200") && r.dtype == QLatin1String("bf16") && r.sustained())
                gemmRatios.push_back(r.measuredTflops / gemmTflops(b200, r, false));
        QCOMPARE(int(gemmRatios.size()), 3);
        qInfo("B200/bf16 GEMMs at the power limit hold %.3f of the benchmark-clock rate (%zu "
              "rows); FlashAttention-4 %.3f (attention's own, not adopted); catalog %.3f",
              median(gemmRatios),
              gemmRatios.size(),
              attention,
              b200.sustainedClock);
        QVERIFY(std::abs(median(gemmRatios) - b200.sustainedClock) <= 0.01);
        QVERIFY(attention > b200.sustainedClock + 0.03);
        // Siblings: H800 and H200 are H100's silicon at the same 700 W. GB200 and GB300 are
        // B200's die: their clocks come from GEMM loops against B200's
        // (sustainedClockFromGemmLoops). No load was measured on A100 but BF16.
        for (const char *id : {"H800-SXM", "H200-SXM"}) {
            QCOMPARE(clockOf(QString::fromLatin1(id), QStringLiteral("bf16")),
                     clockOf(QStringLiteral("H100-SXM"), QStringLiteral("bf16")));
            QCOMPARE(clockOf(QString::fromLatin1(id), QStringLiteral("fp8")),
                     clockOf(QStringLiteral("H100-SXM"), QStringLiteral("fp8")));
        }
        QCOMPARE(clockOf(QStringLiteral("A100-SXM-80GB"), QStringLiteral("fp8")),
                 clockOf(QStringLiteral("A100-SXM-80GB"), QStringLiteral("bf16")));
    }

    // Blackwell's clock by part and load: one GEMM run back to back until the GPU sits at its
    // power limit reaches a fraction of the kernel tables' rate (peak x gemm_efficiency) that
    // differs by part (1,000 W B200, 1,200 W GB200, 1,400 W GB300) and by precision (FP8 draws
    // more power per clock than BF16). A loop of one GEMM runs below a training step's clock,
    // so the fractions are taken relative to B200 under BF16 load, whose step clock was
    // measured (clocks.csv, FlashAttention-4): sustained(G, load) = sustained(B200, bf16) x
    // loop(G, load) / loop(B200, bf16), the median over each part's shapes. Training runs
    // every GPU of a node at once: a loop run on one GPU alone is scaled by the all/one ratio
    // measured on the same node design (GB200's tray, which GB300 shares).
    void sustainedClockFromGemmLoops()
    {
        const QList<QStringList> rows = readCsv(QStringLiteral("gemmloops.csv"), 7);
        QCOMPARE(int(rows.size()), 14);                // the rows of gemmloops.csv
        std::map<QString, std::vector<double>> tflops; // "gpu/load/gpus"
        for (const QStringList &c : rows) {
            QVERIFY2(c[2] == QLatin1String("one") || c[2] == QLatin1String("all"),
                     qPrintable(c.join(',')));
            tflops[c[0] + '/' + c[1] + '/' + c[2]].push_back(c[6].toDouble());
        }
        // The tray's concurrency: GB200 under BF16 load, alone and with its three neighbours.
        const double together = median(tflops.at(QStringLiteral("GB200/bf16/all")))
                                / median(tflops.at(QStringLiteral("GB200/bf16/one")));
        qInfo("GB200 tray: all four GPUs at once hold %.3f of one GPU's loop", together);
        QVERIFY(together > 0.90 && together < 0.97); // "lose another ~6%"
        const auto loopFraction = [&](const QString &key) {
            const GpuSpec &g = gpuOf(key.section('/', 0, 0));
            const bool fp8 = key.section('/', 1, 1) == QLatin1String("fp8");
            const double rate = fp8 ? g.fp8Tflops * g.gemmEfficiencyFp8
                                    : g.bf16Tflops * g.gemmEfficiencyBf16;
            const double alone = key.section('/', 2, 2) == QLatin1String("one") ? together : 1.0;
            return median(tflops.at(key)) * alone / rate;
        };
        const QString anchor = QStringLiteral("B200/bf16/all");
        const double anchorClock = gpuOf(QStringLiteral("B200")).sustainedClock;
        std::set<QString> checked;
        for (const auto &[key, v] : tflops) {
            const QString part = key.section('/', 0, 1);
            // A part measured with all its GPUs running is taken as measured.
            if (key.endsWith(QLatin1String("/one")) && tflops.count(part + QLatin1String("/all")))
                continue;
            const GpuSpec &g = gpuOf(key.section('/', 0, 0));
            const bool fp8 = key.section('/', 1, 1) == QLatin1String("fp8");
            const double derived = anchorClock * loopFraction(key) / loopFraction(anchor);
            const double catalog = fp8 ? g.sustainedClockFp8 : g.sustainedClock;
            qInfo("%-14s loop %.3f of the kernel rate (%zu shapes): clock %.3f, catalog %.3f",
                  qPrintable(key),
                  loopFraction(key),
                  v.size(),
                  derived,
                  catalog);
            QVERIFY2(std::abs(catalog - derived) <= 0.01, qPrintable(key));
            checked.insert(part);
        }
        QCOMPARE(int(checked.size()), 5); // B200 and GB200 under both loads, GB300 under FP8
        // What the loops say: FP8 holds a lower clock than BF16 on B200, and GB300's extra
        // 200 W buys it a higher FP8 clock than GB200's at the same peak.
        QVERIFY(gpuOf(QStringLiteral("B200")).sustainedClockFp8
                < gpuOf(QStringLiteral("B200")).sustainedClock - 0.05);
        QVERIFY(gpuOf(QStringLiteral("GB300")).sustainedClockFp8
                > gpuOf(QStringLiteral("GB200")).sustainedClockFp8 + 0.05);
        // GB300 under BF16 load: no loop measured; it takes GB200's.
        QCOMPARE(gpuOf(QStringLiteral("GB300")).sustainedClock,
                 gpuOf(QStringLiteral("GB200")).sustainedClock);
    }

    // Memory-bound kernels: RMSNorm / LayerNorm at the catalog's HBM efficiency plus one launch
    // (cuDNN's fused kernels), and PyTorch's own at the element-wise factors of the stacks that
    // run them (torchtitan: ComputeModel::elementwiseForward / Backward).
    void memoryBound()
    {
        const QList<QStringList> rows = readCsv(QStringLiteral("norms.csv"), 7);
        QCOMPARE(int(rows.size()), 168); // the rows of tests/data/kernels/norms.csv
        const StackProfile *titan = findStack("torchtitan");
        QVERIFY(titan);
        std::map<QString, std::vector<double>> errors;
        for (const QStringList &c : rows) {
            const GpuSpec &gpu = gpuOf(c[0]);
            const bool pytorch = c[1] == QLatin1String("pytorch");
            const bool fwd = c[5] == QLatin1String("fwd");
            KernelChoice k;
            if (pytorch) {
                k.elementwiseForward = titan->elementwiseForward;
                k.elementwiseBackward = titan->elementwiseBackward;
            }
            const ComputeModel m(gpu, Precision::Bf16, k);
            const double bytes = (fwd ? 4.0 : 6.0) * c[3].toDouble() * c[4].toDouble();
            const double s = (fwd ? m.elementwiseForward(bytes) : m.normBackward(bytes))
                             + ComputeModel::kKernelLaunchS;
            const double predicted = bytes / s / 1e9;
            const double error = predicted / c[6].toDouble() - 1.0;
            // Bounded: the training-scale tensors (64 MB or more moved). Below, one kernel is
            // latency bound (a few us of launch, grid sync and, backward, the weight-gradient
            // reduction) and the model's single launch term prices it fast: printed, not bounded.
            const QString size = bytes >= 64e6 ? QString() : QStringLiteral(" small");
            errors[c[0] + QLatin1Char('/') + c[1] + QLatin1Char(' ') + c[5] + size].push_back(error);
            qInfo("%-9s %-8s %-10s %7s x %6s %s: engine %7.0f GB/s, measured %7.0f, %+6.1f%%",
                  qPrintable(c[0]),
                  qPrintable(c[1]),
                  qPrintable(c[2]),
                  qPrintable(c[3]),
                  qPrintable(c[4]),
                  qPrintable(c[5]),
                  predicted,
                  c[6].toDouble(),
                  100 * error);
        }
        // The catalog's backward HBM efficiency is the median of cuDNN's norm backward at 64 MB
        // or more moved, launch removed (to 0.005): H200's for Hopper, GB200's for GB200 and
        // B200, GB300's for GB300.
        std::map<QString, std::vector<double>> backward;
        for (const QStringList &c : rows) {
            const double bytes = 6.0 * c[3].toDouble() * c[4].toDouble();
            if (c[1] != QLatin1String("cudnn") || c[5] != QLatin1String("bwd") || bytes < 64e6)
                continue;
            const double s = bytes / (c[6].toDouble() * 1e9) - ComputeModel::kKernelLaunchS;
            backward[c[0]].push_back(bytes / s / (gpuOf(c[0]).hbmTBPerS * 1e12));
        }
        const auto median = [](std::vector<double> v) {
            std::sort(v.begin(), v.end());
            const size_t n = v.size();
            return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        };
        for (const auto &[measured, gpus] :
             {std::pair{QStringLiteral("H200-SXM"), QStringList{"H100-SXM", "H800-SXM", "H200-SXM"}},
              std::pair{QStringLiteral("GB200"), QStringList{"GB200", "B200"}},
              std::pair{QStringLiteral("GB300"), QStringList{"GB300"}}}) {
            const double m = median(backward[measured]);
            qInfo("%s cuDNN norm backward: %.4f of HBM (median of %zu rows)",
                  qPrintable(measured),
                  m,
                  backward[measured].size());
            for (const QString &g : gpus)
                QVERIFY2(std::abs(gpuOf(g).memoryEfficiencyBackward - m) <= 0.0051,
                         qPrintable(g + QStringLiteral(": memory_efficiency_backward ")
                                    + QString::number(gpuOf(g).memoryEfficiencyBackward)
                                    + QStringLiteral(", norms.csv gives ")
                                    + QString::number(m, 'f', 4)));
        }
        // Today's medians plus 3 points (large tensors) or 10 (small ones). PyTorch's backward
        // runs at the stacks' 0.45 factor of the backward's bandwidth.
        const auto b = [](double today, bool small) { return today + (small ? 0.10 : 0.03); };
        checkGroups(errors,
                    {{QStringLiteral("H200-SXM/cudnn fwd"), b(0.025, false)},
                     {QStringLiteral("H200-SXM/cudnn bwd"), b(0.074, false)},
                     {QStringLiteral("H200-SXM/pytorch fwd"), b(0.077, false)},
                     {QStringLiteral("H200-SXM/pytorch bwd"), b(0.051, false)},
                     {QStringLiteral("GB200/cudnn fwd"), b(0.017, false)},
                     {QStringLiteral("GB200/cudnn bwd"), b(0.131, false)},
                     {QStringLiteral("GB200/pytorch fwd"), b(0.083, false)},
                     {QStringLiteral("GB200/pytorch bwd"), b(0.113, false)},
                     {QStringLiteral("GB300/cudnn fwd"), b(0.018, false)},
                     {QStringLiteral("GB300/cudnn bwd"), b(0.115, false)},
                     {QStringLiteral("GB300/pytorch fwd"), b(0.074, false)},
                     {QStringLiteral("GB300/pytorch bwd"), b(0.093, false)},
                     {QStringLiteral("H200-SXM/cudnn fwd small"), b(0.068, true)},
                     {QStringLiteral("H200-SXM/cudnn bwd small"), b(0.706, true)},
                     {QStringLiteral("H200-SXM/pytorch fwd small"), b(0.712, true)},
                     {QStringLiteral("H200-SXM/pytorch bwd small"), b(2.014, true)},
                     {QStringLiteral("GB200/cudnn fwd small"), b(0.430, true)},
                     {QStringLiteral("GB200/cudnn bwd small"), b(0.994, true)},
                     {QStringLiteral("GB200/pytorch fwd small"), b(1.745, true)},
                     {QStringLiteral("GB200/pytorch bwd small"), b(2.991, true)},
                     {QStringLiteral("GB300/cudnn fwd small"), b(0.423, true)},
                     {QStringLiteral("GB300/cudnn bwd small"), b(0.915, true)},
                     {QStringLiteral("GB300/pytorch fwd small"), b(1.643, true)},
                     {QStringLiteral("GB300/pytorch bwd small"), b(2.933, true)}});
    }

    // The optimizer's update on its own: a fused Adam (torch `fused=True`) over one 128-way shard
    // of Llama 2 70B (tests/data/kernels/optimizer.csv), priced as the engine prices the step's
    // update (adamUpdateBytes at the catalog's HBM efficiency, one launch). The kernel reaches
    // 0.56-0.63 of the H100 SXM's 3.35 TB/s where the norms reach 0.78-0.80 (norms.csv), so the
    // engine prices it 21-29% fast; not adopted (the PR's H100 is a 500 W HBM2e part of unstated
    // bandwidth, and the whole step is at most 1.5% of a published run's step): the bound is today's
    // median plus 3 points, and the rows fix the sign.
    void optimizerUpdate()
    {
        const QList<QStringList> rows = readCsv(QStringLiteral("optimizer.csv"), 7);
        QCOMPARE(int(rows.size()), 4); // the rows of tests/data/kernels/optimizer.csv
        std::map<QString, std::vector<double>> errors;
        for (const QStringList &c : rows) {
            const ComputeModel m(gpuOf(c[0]), Precision::Bf16);
            const double bytes = c[2].toDouble()
                                 * adamUpdateBytes(c[3].toDouble(),
                                                   c[4].toDouble(),
                                                   c[5].toDouble());
            const double s = m.memory(bytes) + ComputeModel::kKernelLaunchS;
            const double measured = c[6].toDouble() * 1e-3;
            const double error = s / measured - 1.0; // in time: negative where the engine is fast
            errors[c[0] + QStringLiteral(" fused Adam")].push_back(error);
            qInfo("%-9s %-26s %.0f B/param: engine %.3f ms, measured %.3f ms (%.2f TB/s), "
                  "%+6.1f%%",
                  qPrintable(c[0]),
                  qPrintable(c[1]),
                  bytes / c[2].toDouble(),
                  1e3 * s,
                  1e3 * measured,
                  bytes / measured / 1e12,
                  100 * error);
            QVERIFY2(s < measured, "the engine prices the fused update fast on every row");
        }
        checkGroups(errors, {{QStringLiteral("H100-SXM fused Adam"), 0.246 + 0.03}});
        // The step's traffic by Megatron-Core's parts: the distributed optimizer shards all but
        // the zeroing of the full FP32 gradient buffer; ZeRO-2/3 keep only the shard.
        const double p = 1e9;
        const OptimizerTraffic dist = optimizerTraffic(p, 48, 4, 12, true);
        QCOMPARE(dist.zeroGrads, 4 * p);
        QCOMPARE(dist.castGrads, 0.0);
        RAILYARD_COMPARE_NEAR(dist.total(), 4 * p + (4 + 28 + 6) * p / 48, 1e-9);
        const OptimizerTraffic ddp = optimizerTraffic(p, 1, 4, 12, true);
        RAILYARD_COMPARE_NEAR(ddp.total(), (4 + 4 + 28 + 6) * p, 1e-9);
        // NeMo: BF16 gradients cast to FP32 on the shard, BF16 moments (8 bytes of state).
        const OptimizerTraffic nemo = optimizerTraffic(p, 8, 2, 8, true);
        RAILYARD_COMPARE_NEAR(nemo.total(), 2 * p + (6 + 4 + 20 + 6) * p / 8, 1e-9);
        const OptimizerTraffic zero3 = optimizerTraffic(p, 8, 2, 12, false);
        QCOMPARE(zero3.zeroGrads, 2 * p / 8);
    }

    // Flash attention: the kernel's measured forward and backward efficiency (catalog
    // attention_kernels) times the per-tile shape term (ComputeModel::attentionForward).
    void attention()
    {
        const std::vector<AttentionRow> rows = readAttention();
        QCOMPARE(int(rows.size()), 180); // the rows of tests/data/kernels/attention.csv
        std::map<QString, std::vector<double>> errors; // by GPU / kernel
        std::vector<double> all;
        qInfo("%-13s %-5s %-6s %3s %3s %3s %6s %4s %3s %9s %9s %8s",
              "gpu",
              "kern",
              "pass",
              "B",
              "H",
              "Hkv",
              "S",
              "D",
              "cau",
              "engine TF",
              "meas. TF",
              "error");
        for (const AttentionRow &r : rows) {
            const double predicted = predictedTflops(r);
            const double error = predicted / r.measuredTflops - 1.0; // + : engine too fast
            errors[r.gpu + QLatin1Char('/') + r.kernel].push_back(error);
            all.push_back(std::abs(error));
            qInfo("%-13s %-5s %-6s %3.0f %3.0f %3.0f %6.0f %4.0f %3d %9.1f %9.1f %+7.1f%%",
                  qPrintable(r.gpu),
                  qPrintable(r.kernel),
                  qPrintable(r.pass),
                  r.batch,
                  r.heads,
                  r.kvHeads,
                  r.seq,
                  r.headDim,
                  int(r.causal),
                  predicted,
                  r.measuredTflops,
                  100 * error);
        }
        qInfo("all attention rows: median |error| %.1f%%", 100 * median(all));
        // Today's medians (printed above) plus 3 points.
        const std::map<QString, double> bound = {{QStringLiteral("A100-SXM-80GB/fa1"), 0.07},
                                                 {QStringLiteral("A100-SXM-80GB/triton"), 0.12},
                                                 {QStringLiteral("H100-SXM/fa1"), 0.08},
                                                 {QStringLiteral("A100-SXM-80GB/fa2"), 0.12},
                                                 {QStringLiteral("H100-SXM/fa2"), 0.11},
                                                 {QStringLiteral("H100-SXM/fa3"), 0.10},
                                                 {QStringLiteral("H100-SXM/cudnn"), 0.37},
                                                 {QStringLiteral("H200-SXM/cudnn"), 0.06},
                                                 {QStringLiteral("GB200/cudnn"), 0.08},
                                                 {QStringLiteral("GB300/cudnn"), 0.06}};
        checkGroups(errors, bound);
        QVERIFY(median(all) <= 0.08);
    }

    // The mechanisms the attention rows show, each checked on the engine: long sequences run
    // at more of the peak than short ones, a causal call loses more at short length than a
    // non-causal one, grouped-query attention costs the same per FLOP, and the stack decides
    // the kernel (FlashAttention-2 through PyTorch's SDPA at about half of cuDNN's rate).
    void attentionShape()
    {
        const GpuSpec &h100 = gpuOf(QStringLiteral("H100-SXM"));
        const ComputeModel fa3 = attentionModel(h100, QStringLiteral("fa3"));
        const auto rate = [](const ComputeModel &m, double s, bool causal) {
            const double f = 4.0 * 16 * s * s * 128 * (causal ? 0.5 : 1.0);
            return f / m.attentionForward(f, s, causal) / 1e12;
        };
        QVERIFY(rate(fa3, 16384, false) > 1.25 * rate(fa3, 512, false));
        QVERIFY(rate(fa3, 1024, true) < 0.85 * rate(fa3, 1024, false));
        QVERIFY(rate(fa3, 16384, true) > 0.95 * rate(fa3, 16384, false));
        // The measured GQA rows (kv heads 8 against 32) differ by at most 2.2%: the engine
        // prices attention by its query heads alone.
        const std::vector<AttentionRow> rows = readAttention();
        for (const AttentionRow &a : rows)
            for (const AttentionRow &b : rows)
                if (a.gpu == b.gpu && a.kernel == b.kernel && a.pass == b.pass && a.seq == b.seq
                    && a.causal == b.causal && a.batch == b.batch && a.heads == b.heads
                    && a.kvHeads < b.kvHeads) {
                    QVERIFY(std::abs(a.measuredTflops / b.measuredTflops - 1) < 0.025);
                    QCOMPARE(predictedTflops(a), predictedTflops(b));
                }
        // The stack decides the kernel: Megatron-Core (Transformer Engine) runs cuDNN's on
        // Hopper and FlashAttention-2 on Ampere; torchtitan runs SDPA's FlashAttention-2.
        const StackProfile *mcore = findStack("megatron-core");
        const StackProfile *titan = findStack("torchtitan");
        QVERIFY(mcore && titan);
        QCOMPARE(kernelChoice(*mcore, AttentionKernel::Flash, h100).attention,
                 AttentionKernel::Cudnn);
        QCOMPARE(kernelChoice(*mcore, AttentionKernel::Flash, gpuOf(QStringLiteral("A100-SXM-80GB")))
                         .attention,
                 AttentionKernel::FlashAttention2);
        QCOMPARE(kernelChoice(*titan, AttentionKernel::Flash, h100).attention,
                 AttentionKernel::FlashAttention2);
        // FlashAttention-3 is Hopper-only: asked for on Blackwell, the stack's kernel runs.
        QCOMPARE(kernelChoice(*mcore,
                              AttentionKernel::FlashAttention3,
                              gpuOf(QStringLiteral("GB200")))
                         .attention,
                 AttentionKernel::Cudnn);
        const ComputeModel cudnn(h100,
                                 Precision::Bf16,
                                 kernelChoice(*mcore, AttentionKernel::Flash, h100));
        const ComputeModel sdpa(h100,
                                Precision::Bf16,
                                kernelChoice(*titan, AttentionKernel::Flash, h100));
        const double f = 4.0 * 32 * 8192.0 * 8192 * 128 * 0.5;
        const double cudnnS = cudnn.attentionForward(f, 8192, true)
                              + cudnn.attentionBackward(f, 8192, true);
        const double sdpaS = sdpa.attentionForward(f, 8192, true)
                             + sdpa.attentionBackward(f, 8192, true);
        qInfo("H100, 8k causal, forward + backward: cuDNN %.0f TFLOP/s, FlashAttention-2 %.0f",
              3.5 * f / cudnnS / 1e12,
              3.5 * f / sdpaS / 1e12);
        QVERIFY(sdpaS > 1.6 * cudnnS);
    }

    // The kernels before FlashAttention-2: FlashAttention 1.x (CUDA) and its Triton version
    // (flash_attn_triton.py, llm-foundry's attn_impl "triton"), measured forward + backward only
    // (the FlashAttention-2 paper's figures). Each is priced as FlashAttention-2's forward and
    // backward on the same GPU scaled by one factor: the median of measured over
    // FlashAttention-2-priced on the rows of 4k keys and more (the catalog's rates are long
    // sequences'). Triton's was measured on A100 only; on Hopper it is FlashAttention 1.x's
    // factor times Triton's against 1.x's on A100 (the same Ampere-era code on both).
    void flashAttentionBeforeVersion2()
    {
        const std::vector<AttentionRow> rows = readAttention();
        const auto factor = [&](const QString &gpu, const QString &kernel) {
            std::vector<double> ratios;
            for (const AttentionRow &r : rows)
                if (r.gpu == gpu && r.kernel == kernel && r.seq >= 4096) {
                    AttentionRow asFa2 = r;
                    asFa2.kernel = QStringLiteral("fa2");
                    ratios.push_back(r.measuredTflops / predictedTflops(asFa2));
                }
            return median(ratios);
        };
        const auto catalogFactor = [](const QString &gpu, const char *kernel) {
            const GpuSpec &g = gpuOf(gpu);
            const AttentionKernelSpec *k = g.attentionKernel(kernel);
            const AttentionKernelSpec *fa2 = g.attentionKernel("fa2");
            if (!k || !fa2)
                qFatal("%s has no %s or fa2 entry", qPrintable(gpu), kernel);
            // Forward and backward scaled alike (only their sum was measured): a split entry
            // gives a negative factor, which no check below accepts.
            const double f = k->forward / fa2->forward, b = k->backward / fa2->backward;
            return std::abs(f - b) < 0.005 ? f : -1.0;
        };
        const QString a100 = QStringLiteral("A100-SXM-80GB"), h100 = QStringLiteral("H100-SXM");
        const double a100Fa1 = factor(a100, QStringLiteral("fa1"));
        const double a100Triton = factor(a100, QStringLiteral("triton"));
        const double h100Fa1 = factor(h100, QStringLiteral("fa1"));
        const double h100Triton = h100Fa1 * a100Triton / a100Fa1;
        qInfo("of FlashAttention-2's rate: A100 FlashAttention 1.x %.3f, Triton %.3f; H100 1.x "
              "%.3f, Triton (derived) %.3f",
              a100Fa1,
              a100Triton,
              h100Fa1,
              h100Triton);
        // Measured on A100: Triton's forward + backward is about half FlashAttention-2's.
        QVERIFY(a100Triton > 0.4 && a100Triton < 0.6);
        const std::pair<QString, const char *> entries[] = {{a100, "fa1"},
                                                            {a100, "triton"},
                                                            {h100, "fa1"},
                                                            {h100, "triton"}};
        const double expected[] = {a100Fa1, a100Triton, h100Fa1, h100Triton};
        for (int i = 0; i < 4; ++i)
            QVERIFY2(std::abs(catalogFactor(entries[i].first, entries[i].second) - expected[i])
                             <= 0.01,
                     qPrintable(entries[i].first + QLatin1Char('/') + entries[i].second));
        // A layout asks for them by name; every stack runs what the layout names.
        AttentionKernel k = AttentionKernel::Flash;
        QVERIFY(attentionKernelFromString("triton", k));
        QCOMPARE(k, AttentionKernel::FlashAttentionTriton);
        QCOMPARE(kernelChoice(*findStack("composer"), k, gpuOf(h100)).attention,
                 AttentionKernel::FlashAttentionTriton);
        // Neither runs on Blackwell: the stack's own kernel does (cuDNN under Megatron-Core).
        QCOMPARE(kernelChoice(*findStack("megatron-core"), k, gpuOf(QStringLiteral("B200")))
                         .attention,
                 AttentionKernel::Cudnn);
    }

    // Head dimension 64 against 128 (attention-headdim.csv): the catalog's head_dim_64 rates
    // are the medians of the same-shape pairs; and the GPT-OSS sliding-window layer, measured
    // on GB200 and GB300 (cuDNN 9.22, a 128-token window) and on H200 (cuDNN 9.19.1, 1,024),
    // priced with the window's shape term and the head factor (Blackwell's backward factor is
    // H100's, not measured there).
    void headDimension()
    {
        const QList<QStringList> rows = readCsv(QStringLiteral("attention-headdim.csv"), 11);
        QCOMPARE(int(rows.size()), 138); // the rows of attention-headdim.csv
        // Pairs: the same GPU, kernel, pass, mask, batch, sequence and hidden size at 64 and
        // 128.
        std::map<QString, double> at128;
        const auto key = [](const QStringList &c) {
            const double hidden = c[4].toDouble() * c[7].toDouble();
            return c[0] + '/' + c[1] + '/' + c[2] + '/' + c[8] + '/' + c[3] + '/' + c[6] + '/'
                   + QString::number(hidden);
        };
        for (const QStringList &c : rows)
            if (c[7] == QLatin1String("128"))
                at128[key(c)] = c[9].toDouble();
        std::map<QString, std::vector<double>> ratios; // by GPU / kernel / pass
        for (const QStringList &c : rows)
            if (c[7] == QLatin1String("64") && at128.count(key(c)))
                ratios[c[0] + '/' + c[1] + '/' + c[2]].push_back(c[9].toDouble() / at128[key(c)]);
        QCOMPARE(int(ratios.size()), 6); // H100: FA2, FA3, cuDNN; forward and backward
        for (const auto &[group, v] : ratios) {
            const GpuSpec &gpu = gpuOf(group.section('/', 0, 0));
            const AttentionKernelSpec *k = gpu.attentionKernel(
                    group.section('/', 1, 1).toStdString());
            QVERIFY2(k, qPrintable(group));
            const bool fwd = group.section('/', 2, 2) == QLatin1String("fwd");
            const double catalog = fwd ? k->forwardHead64 : k->backwardHead64;
            qInfo("%-22s head 64 / 128: measured median %.3f over %zu pairs (%.2f-%.2f), catalog "
                  "%.3f",
                  qPrintable(group),
                  median(v),
                  v.size(),
                  *std::min_element(v.begin(), v.end()),
                  *std::max_element(v.begin(), v.end()),
                  catalog);
            QVERIFY2(std::abs(catalog - median(v)) <= 0.01, qPrintable(group));
            // The engine gives that ratio at head dimension 64.
            RAILYARD_COMPARE_NEAR(ComputeModel::attentionHeadFactor(catalog, 64), catalog, 1e-9);
        }
        // Between 64 and 128 the factor rises to 1; above 128 it stays there.
        QVERIFY(ComputeModel::attentionHeadFactor(0.7, 96) > 0.7);
        QVERIFY(ComputeModel::attentionHeadFactor(0.7, 96) < 1);
        QCOMPARE(ComputeModel::attentionHeadFactor(0.7, 192), 1.0);
        // The sliding-window rows, priced.
        std::vector<double> errors;
        std::vector<double> hopper;
        for (const QStringList &c : rows) {
            if (!c[8].startsWith(QLatin1String("swa")))
                continue;
            const ComputeModel m = attentionModel(gpuOf(c[0]), c[1]);
            const double b = c[3].toDouble(), h = c[4].toDouble(), s = c[6].toDouble();
            const double d = c[7].toDouble(), w = c[8].mid(3).toDouble();
            const double f = 4.0 * b * h * s * (w - w * w / (2 * s)) * d;
            const bool fwd = c[2] == QLatin1String("fwd");
            const double t = fwd ? m.attentionForward(f, w, true, d)
                                 : m.attentionBackward(f, w, true, d);
            const double predicted = (fwd ? f : 2.5 * f) / t / 1e12;
            const double error = predicted / c[9].toDouble() - 1;
            errors.push_back(std::abs(error));
            if (gpuOf(c[0]).architecture == "hopper")
                hopper.push_back(std::abs(error));
            qInfo("%-8s %s seq %6.0f window %4.0f: engine %6.1f TFLOP/s, measured %6.1f (%+.1f%%)",
                  qPrintable(c[0]),
                  qPrintable(c[2]),
                  s,
                  w,
                  predicted,
                  c[9].toDouble(),
                  100 * error);
        }
        QCOMPARE(int(errors.size()), 30);
        QCOMPARE(int(hopper.size()), 10);
        qInfo("sliding-window rows: median |error| %.1f%%, H200's (window 1,024) %.1f%%",
              100 * median(errors),
              100 * median(hopper));
        QVERIFY(median(errors) <= 0.21); // today's median plus 3 points
        QVERIFY(median(hopper) <= 0.14); // the same
    }

    // Sliding-window layers (gpt-oss: 18 of 36 layers see the last 128 tokens; Transformer
    // Engine 2.9 runs them on cuDNN with the window, learnable sinks needing cuDNN 9.13.1): a
    // layer's attention is the average over the model's layers, the windowed half costing a
    // sweep of one or two key blocks per query tile; the rest of the layer is unchanged.
    void slidingWindowLayers()
    {
        const GpuSpec &gb200 = gpuOf(QStringLiteral("GB200"));
        const ComputeModel c(gb200,
                             Precision::Bf16,
                             kernelChoice(*findStack("megatron-core"),
                                          AttentionKernel::Flash,
                                          gb200));
        ModelDims oss = *findModelPreset("gpt-oss-120b");
        QCOMPARE(oss.slidingWindow, 128);
        QCOMPARE(oss.slidingLayers, 18);
        ModelDims full = oss;
        full.slidingWindow = full.slidingLayers = 0;
        LayerShard s;
        s.seqLen = 8192;
        s.ep = 64;
        const LayerTimes w = layerTimes(oss, true, s, c);
        const LayerTimes f = layerTimes(full, true, s, c);
        // Half the layers keep full attention; the windowed half is a small part of its own.
        QVERIFY(w.attentionForward > 0.5 * f.attentionForward);
        QVERIFY(w.attentionForward < 0.6 * f.attentionForward);
        RAILYARD_COMPARE_NEAR(w.forward - w.attentionForward, f.forward - f.attentionForward, 1e-9);
        QVERIFY(w.hardwareFlops < f.hardwareFlops);
        // A window as long as the sequence is full attention.
        ModelDims wide = oss;
        wide.slidingWindow = 8192;
        const LayerTimes all = layerTimes(wide, true, s, c);
        RAILYARD_COMPARE_NEAR(all.attentionForward, f.attentionForward, 0.01);
    }

    // Attention dropout (a model that trains with it: GPT-style presets, Megatron's default
    // 0.1) keeps a share of the flash kernel's rate measured on Blackwell (GB200,
    // flash-attention#2597): the layer's attention forward at 1 / 0.80 of its time, its
    // backward at 1 / 0.565, nothing else; on Hopper and Ampere, where nobody measured it,
    // nothing changes.
    void attentionDropout()
    {
        QCOMPARE(ComputeModel::kDropoutForwardShare, 0.80);
        QCOMPARE(ComputeModel::kDropoutBackwardShare, 0.565);
        ModelDims plain = *findModelPreset("gpt3-5b");
        QVERIFY(plain.dropout); // GPT-style presets train with dropout
        plain.dropout = false;
        ModelDims dropout = plain;
        dropout.dropout = true;
        LayerShard s;
        s.seqLen = 4096;
        s.microBatch = 4;
        s.recompute = Recompute::None;
        const double flops = 2.0 * s.microBatch * plain.heads * s.seqLen * s.seqLen
                             * (2.0 * plain.headDim) * 0.5;
        for (const char *id : {"B200", "GB200", "H100-SXM", "A100-SXM-80GB"}) {
            const GpuSpec &gpu = gpuOf(QString::fromLatin1(id));
            const ComputeModel c(gpu,
                                 Precision::Bf16,
                                 kernelChoice(*findStack("megatron-core"),
                                              AttentionKernel::Flash,
                                              gpu));
            const LayerTimes a = layerTimes(plain, false, s, c);
            const LayerTimes b = layerTimes(dropout, false, s, c);
            const bool blackwell = gpu.architecture == "blackwell";
            const double forward = blackwell ? 1 / 0.80 - 1 : 0;
            const double backward = blackwell ? 1 / 0.565 - 1 : 0;
            qInfo("%-14s attention forward %.3f ms -> %.3f ms, layer %.3f -> %.3f ms",
                  id,
                  1e3 * a.attentionForward,
                  1e3 * b.attentionForward,
                  1e3 * (a.forward + a.backward),
                  1e3 * (b.forward + b.backward));
            RAILYARD_COMPARE_NEAR(b.attentionForward, a.attentionForward * (1 + forward), 1e-9);
            RAILYARD_COMPARE_NEAR(b.forward - a.forward, a.attentionForward * forward, 1e-9);
            RAILYARD_COMPARE_NEAR(b.backward - a.backward,
                                  c.attentionBackward(flops, s.seqLen, true, plain.headDim)
                                          * backward,
                                  1e-6);
            RAILYARD_COMPARE_NEAR(b.gemm, a.gemm, 1e-12);
        }
    }

    // Megatron-Core runs gpt-oss's operations beyond Llama's as kernels of their own: the
    // GLU's clamp (16 bytes per activation element forward, 30 backward), the experts' second
    // bias added expert by expert (12 per output element each way) and YaRN's unfused rotary
    // embedding (20 per query and key element forward, 40 backward), and the attention
    // output's bias (4 per hidden element); priced at the GPU's memory rate with a launch per
    // kernel. A stack that fuses them (torchtitan here) pays nothing extra.
    void unfusedModelExtras()
    {
        QVERIFY(findStack("megatron-core")->unfusedModelExtras);
        QVERIFY(findStack("nemo")->unfusedModelExtras);
        QVERIFY(!findStack("torchtitan")->unfusedModelExtras);
        const GpuSpec &gb300 = gpuOf(QStringLiteral("GB300"));
        KernelChoice k = kernelChoice(*findStack("megatron-core"), AttentionKernel::Flash, gb300);
        const ComputeModel fused(gb300, Precision::Bf16, [k]() mutable {
            k.unfusedModelExtras = false;
            return k;
        }());
        const ComputeModel megatron(gb300, Precision::Bf16, k);
        const ModelDims oss = *findModelPreset("gpt-oss-120b");
        LayerShard s;
        s.tp = 1;
        s.sequenceParallel = false;
        s.microBatch = 2;
        s.seqLen = 8192;
        s.ep = 64;
        s.recompute = Recompute::None;
        const LayerTimes a = layerTimes(oss, true, s, fused);
        const LayerTimes b = layerTimes(oss, true, s, megatron);
        const double T = 2 * 8192.0, h = 2880, w = 2880;
        const double copies = T * 4; // top-4, balanced
        const double qk = (64 + 8) * 64.0;
        const double forwardBytes = copies * w * 16 + copies * h * 12 + T * qk * 20 + T * h * 4;
        const double backwardBytes = copies * w * 30 + copies * h * 12 + T * qk * 40 + T * h * 4;
        const int forwardKernels = 3 + (2 * 2 + 1) + 12 + 1, backwardKernels = 7 + 5 + 12 + 1;
        RAILYARD_COMPARE_NEAR(b.forward - a.forward,
                              megatron.memory(forwardBytes)
                                      + forwardKernels * ComputeModel::kKernelLaunchS,
                              1e-9);
        RAILYARD_COMPARE_NEAR(b.backward - a.backward,
                              megatron.memory(backwardBytes)
                                      + backwardKernels * ComputeModel::kKernelLaunchS,
                              1e-9);
        qInfo("gpt-oss-120b MoE layer on GB300 (2 x 8192 tokens, 2 experts a GPU): %.2f ms "
              "forward and backward as fused, %.2f ms as Megatron-Core runs it",
              1e3 * (a.forward + a.backward),
              1e3 * (b.forward + b.backward));
        // A Llama-style model has none of them.
        const ModelDims qwen = *findModelPreset("qwen3-30b-a3b");
        RAILYARD_COMPARE_NEAR(layerTimes(qwen, true, s, megatron).forward,
                              layerTimes(qwen, true, s, fused).forward,
                              1e-12);
    }

    // PyTorch's async TP (torchtitan) ends each forward reduce-scatter with a torch.sum of the
    // TP ranks' BF16 partials, a kernel of its own at 33% of HBM's peak (pytorch/pytorch#191803:
    // 23-43%): the attention output's and the FFN's second projection's, each reading the m x h
    // partials and writing the 1/tp shard. Without TP overlap, or where the collective reduces
    // as it moves (Transformer Engine), there is none; backward is unchanged.
    void asyncTpSeparateReduce()
    {
        QVERIFY(findStack("torchtitan")->tpOverlapSeparateReduce);
        QVERIFY(!findStack("megatron-core")->tpOverlapSeparateReduce);
        const GpuSpec &h100 = gpuOf(QStringLiteral("H100-SXM"));
        const ComputeModel c(h100,
                             Precision::Bf16,
                             kernelChoice(*findStack("torchtitan"), AttentionKernel::Flash, h100));
        const ModelDims llama = *findModelPreset("llama3-70b");
        LayerShard s;
        s.tp = 8;
        s.microBatch = 2;
        s.seqLen = 8192;
        s.recompute = Recompute::None;
        s.tpOverlap = true;
        const LayerTimes fused = layerTimes(llama, false, s, c);
        s.tpOverlapSeparateReduce = true;
        const LayerTimes separate = layerTimes(llama, false, s, c);
        const double T = 2 * 8192.0, h = 8192;
        const double bytes = 2 * T * h * 2 * (1 + 1.0 / 8);
        const double expected = bytes / (h100.hbmTBPerS * 1e12 * 0.33)
                                + 2 * ComputeModel::kKernelLaunchS;
        RAILYARD_COMPARE_NEAR(separate.forward - fused.forward, expected, 1e-9);
        RAILYARD_COMPARE_NEAR(separate.backward, fused.backward, 1e-12);
        qInfo("llama3-70b layer, TP 8, 2 x 8192 tokens on H100: the two reductions %.2f ms of a "
              "%.2f ms forward",
              1e3 * expected,
              1e3 * separate.forward);
        // Without TP overlap the reduce-scatters are NCCL's, which reduce as they move.
        s.tpOverlap = false;
        const LayerTimes nccl = layerTimes(llama, false, s, c);
        s.tpOverlapSeparateReduce = false;
        RAILYARD_COMPARE_NEAR(nccl.forward, layerTimes(llama, false, s, c).forward, 1e-12);
    }

    // What an eager stack's element-wise kernels cost follows the model: Llama's RMSNorm is
    // seven PyTorch operations (36 bytes an element) and its rotary embedding three more on the
    // queries and keys; a GPT-style model's LayerNorm is F.layer_norm, one kernel (4 bytes),
    // with positions added once at the embedding (MPT, GPT-3, OPT). And llm-foundry's loss is
    // flash-attn's fused cross-entropy over the BF16 logits: 2 bytes a logit forward, 4
    // backward, at HBM's rate, where the FP32 path moves 12 and 24 at the element-wise rate.
    void eagerNormsPositionsAndLoss()
    {
        const GpuSpec &h100 = gpuOf(QStringLiteral("H100-SXM"));
        const StackProfile &composer = *findStack("composer");
        QVERIFY(composer.eagerElementwise && composer.fusedCrossEntropy);
        QVERIFY(!findStack("torchtitan")->fusedCrossEntropy);
        const ComputeModel eager(h100,
                                 Precision::Bf16,
                                 kernelChoice(composer, AttentionKernel::Flash, h100, false));
        QVERIFY(eager.kernels().eagerElementwise);
        ModelDims mpt = *findModelPreset("gpt3-5b"); // GPT-style: LayerNorm, learned positions
        QVERIFY(mpt.layerNorm && !mpt.rotary);
        ModelDims rms = mpt;
        rms.layerNorm = false;
        rms.rotary = true;
        const LayerShard s{.tp = 1,
                           .sequenceParallel = false,
                           .microBatch = 4,
                           .seqLen = 2048,
                           .recompute = Recompute::None};
        const double T = 4 * 2048.0, h = mpt.hidden, qk = 2.0 * mpt.heads * mpt.headDim;
        // Two norms (36 - 4 bytes each) and RoPE's 20 on the queries and keys; 4 + 2 + 4
        // kernels more (each RMSNorm 4, RoPE 2; the MLP is GeLU in both).
        const double forwardBytes = 2 * T * h * 32 + T * qk * 20;
        const LayerTimes a = layerTimes(mpt, false, s, eager), b = layerTimes(rms, false, s, eager);
        RAILYARD_COMPARE_NEAR(b.forward - a.forward,
                              eager.memory(forwardBytes) + 10 * ComputeModel::kKernelLaunchS,
                              1e-9);
        RAILYARD_COMPARE_NEAR(b.backward - a.backward,
                              eager.memory(2 * forwardBytes) + 20 * ComputeModel::kKernelLaunchS,
                              1e-9);
        // The loss: the same output layer with and without the fused kernel.
        LayerShard fusedLoss = s;
        fusedLoss.fusedCrossEntropy = true;
        const LayerTimes fp32 = outputLayerTimes(mpt, s, eager);
        const LayerTimes fused = outputLayerTimes(mpt, fusedLoss, eager);
        const double logits = T * mpt.vocab;
        RAILYARD_COMPARE_NEAR(fp32.forward - fused.forward,
                              eager.elementwiseForward(logits * 12) - eager.memory(logits * 2),
                              1e-9);
        RAILYARD_COMPARE_NEAR(fp32.backward - fused.backward,
                              eager.elementwiseBackward(logits * 24) - eager.memory(logits * 4),
                              1e-9);
        qInfo("GPT 5B output layer and loss on H100 (4 x 2048 tokens, vocab %d): %.2f ms "
              "forward and backward in FP32 kernels, %.2f ms fused",
              mpt.vocab,
              1e3 * (fp32.forward + fp32.backward),
              1e3 * (fused.forward + fused.backward));
        QVERIFY(fused.forward + fused.backward < 0.9 * (fp32.forward + fp32.backward));
    }
};

QTEST_APPLESS_MAIN(TestKernels)
#include "tst_kernels.moc"
