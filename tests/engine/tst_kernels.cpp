// Issue 19, point 1 (compute): the engine's ComputeModel against published kernel benchmarks, on
// its own, before anything is composed. Each row of tests/data/kernels/*.csv keeps its source;
// this test prints, per row, the engine's predicted throughput, the measured one and the signed
// error, and the median |error| per GPU and precision. The bounds are today's medians plus a
// stated margin, so a regression fails; where the model is clearly off the test prints "GAP".
#include "layout/catalog.h"
#include "step/compute.h"

#include <QFile>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

using namespace railyard::engine;

namespace {

struct AttentionRow
{
    QString gpu, kernel, dtype;
    double batch = 0, heads = 0, seq = 0, headDim = 0;
    bool causal = false;
    double measuredTflops = 0;
};

std::vector<AttentionRow> readAttention()
{
    std::vector<AttentionRow> rows;
    QFile f(QStringLiteral(RAILYARD_TEST_DATA "/kernels/attention.csv"));
    if (!f.open(QIODevice::ReadOnly | QIODevice::Text))
        return rows;
    bool header = true;
    while (!f.atEnd()) {
        const QString line = QString::fromUtf8(f.readLine()).trimmed();
        if (line.isEmpty() || line.startsWith('#'))
            continue;
        if (header) { // the column names
            header = false;
            continue;
        }
        const QStringList c = line.split(',');
        if (c.size() != 9)
            continue;
        AttentionRow r;
        r.gpu = c[0];
        r.kernel = c[1];
        r.dtype = c[2];
        r.batch = c[3].toDouble();
        r.heads = c[4].toDouble();
        r.seq = c[5].toDouble();
        r.headDim = c[6].toDouble();
        r.causal = c[7] == QLatin1String("1");
        r.measuredTflops = c[8].toDouble();
        rows.push_back(r);
    }
    return rows;
}

struct GemmRow
{
    QString gpu, library, dtype;
    double m = 0, n = 0, k = 0;
    double measuredTflops = 0;
};

// The data rows of a CSV under tests/data/kernels (comments and the header skipped).
QList<QStringList> readCsv(const QString &name, int columns)
{
    QList<QStringList> out;
    QFile f(QStringLiteral(RAILYARD_TEST_DATA "/kernels/") + name);
    if (!f.open(QIODevice::ReadOnly | QIODevice::Text))
        return out;
    bool header = true;
    while (!f.atEnd()) {
        const QString line = QString::fromUtf8(f.readLine()).trimmed();
        if (line.isEmpty() || line.startsWith('#'))
            continue;
        if (header) {
            header = false;
            continue;
        }
        const QStringList c = line.split(',');
        if (c.size() == columns)
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

} // namespace

class TestKernels : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // Dense GEMM: ComputeModel::gemm(m, n, k) (catalog gemmEfficiencyBf16 / Fp8, wave
    // quantization over the SMs, a K-loop prologue, the HBM roofline, a launch tail).
    void gemmForward()
    {
        const QList<QStringList> rows = readCsv(QStringLiteral("gemm.csv"), 7);
        QCOMPARE(int(rows.size()), 4); // the rows of tests/data/kernels/gemm.csv
        std::map<QString, std::vector<double>> absErrors;
        qInfo("%-10s %-13s %-5s %6s %6s %6s %10s %10s %8s",
              "gpu",
              "library",
              "dtype",
              "m",
              "n",
              "k",
              "engine TF",
              "meas. TF",
              "error");
        for (const QStringList &c : rows) {
            GemmRow r{c[0],
                      c[1],
                      c[2],
                      c[3].toDouble(),
                      c[4].toDouble(),
                      c[5].toDouble(),
                      c[6].toDouble()};
            const GpuSpec *gpu = Catalog::builtin().gpu(r.gpu.toStdString());
            QVERIFY2(gpu, qPrintable(r.gpu));
            const bool fp8 = r.dtype == QLatin1String("fp8");
            const ComputeModel model(*gpu, fp8 ? Precision::Fp8 : Precision::Bf16);
            const double seconds = model.gemm(r.m, r.n, r.k, fp8);
            QVERIFY(seconds > 0);
            const double predicted = 2.0 * r.m * r.n * r.k / seconds / 1e12;
            const double error = predicted / r.measuredTflops - 1.0; // + : engine too fast
            absErrors[r.gpu + QLatin1Char('/') + r.dtype].push_back(std::abs(error));
            qInfo("%-10s %-13s %-5s %6.0f %6.0f %6.0f %10.1f %10.1f %+7.1f%%",
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
        // Today (catalog H100 gemmEfficiencyBf16 0.78): median |error| 5.2% (-8.8% .. +2.6%).
        // Margin: 3 points.
        const std::map<QString, double> bound = {{QStringLiteral("H100-SXM/bf16"), 0.082}};
        for (const auto &[group, errs] : absErrors) {
            const double med = median(errs);
            qInfo("%s: %zu rows, median |error| %.1f%%", qPrintable(group), errs.size(), 100 * med);
            QVERIFY2(bound.count(group), qPrintable(group + " has no stated bound"));
            QVERIFY2(med <= bound.at(group),
                     qPrintable(QStringLiteral("%1: median |error| %2 > %3")
                                        .arg(group)
                                        .arg(med)
                                        .arg(bound.at(group))));
        }
    }

    // Flash attention forward: the engine prices it at attentionEfficiency x BF16 peak whatever
    // the shape (ComputeModel::attentionForward(flops)).
    void attentionForward()
    {
        const std::vector<AttentionRow> rows = readAttention();
        QCOMPARE(int(rows.size()), 6); // the rows of tests/data/kernels/attention.csv
        std::map<QString, std::vector<double>> absErrors; // by GPU / dtype
        std::map<QString, std::vector<double>> signedErrors;
        qInfo("%-10s %-5s %-5s %5s %4s %6s %4s %3s %10s %10s %8s",
              "gpu",
              "kern",
              "dtype",
              "B",
              "H",
              "S",
              "D",
              "cau",
              "engine TF",
              "meas. TF",
              "error");
        for (const AttentionRow &r : rows) {
            const GpuSpec *gpu = Catalog::builtin().gpu(r.gpu.toStdString());
            QVERIFY2(gpu, qPrintable(r.gpu));
            const ComputeModel model(*gpu, Precision::Bf16);
            const double flops = 4.0 * r.batch * r.heads * r.seq * r.seq * r.headDim
                                 * (r.causal ? 0.5 : 1.0);
            const double seconds = model.attentionForward(flops);
            QVERIFY(seconds > 0);
            const double predicted = flops / seconds / 1e12;
            const double error = predicted / r.measuredTflops - 1.0; // + : engine too fast
            const QString group = r.gpu + QLatin1Char('/') + r.dtype;
            absErrors[group].push_back(std::abs(error));
            signedErrors[group].push_back(error);
            qInfo("%-10s %-5s %-5s %5.0f %4.0f %6.0f %4.0f %3d %10.1f %10.1f %+7.1f%%",
                  qPrintable(r.gpu),
                  qPrintable(r.kernel),
                  qPrintable(r.dtype),
                  r.batch,
                  r.heads,
                  r.seq,
                  r.headDim,
                  int(r.causal),
                  predicted,
                  r.measuredTflops,
                  100 * error);
        }
        // Today (catalog H100 attentionEfficiency 0.52): median |error| 14.7%, from +18% at
        // S = 512 to -17% at S = 16k. Margin: 3 points.
        const std::map<QString, double> bound = {{QStringLiteral("H100-SXM/bf16"), 0.177}};
        for (const auto &[group, errs] : absErrors) {
            const double med = median(errs);
            const double lo = *std::min_element(signedErrors[group].begin(),
                                                signedErrors[group].end());
            const double hi = *std::max_element(signedErrors[group].begin(),
                                                signedErrors[group].end());
            qInfo("%s: %zu rows, median |error| %.1f%%, signed %+.1f%% .. %+.1f%%",
                  qPrintable(group),
                  errs.size(),
                  100 * med,
                  100 * lo,
                  100 * hi);
            // The engine has one efficiency for every shape: the measured kernel climbs from
            // 430 to 621 TFLOP/s between S = 512 and 16k, which one number cannot follow.
            if (hi - lo > 0.2)
                qInfo("GAP %s: error spans %.0f points over the sequence lengths (no shape "
                      "dependence in attentionForward)",
                      qPrintable(group),
                      100 * (hi - lo));
            QVERIFY2(bound.count(group), qPrintable(group + " has no stated bound"));
            QVERIFY2(med <= bound.at(group),
                     qPrintable(QStringLiteral("%1: median |error| %2 > %3")
                                        .arg(group)
                                        .arg(med)
                                        .arg(bound.at(group))));
        }
        // Long sequences run faster per FLOP than short ones in the measurements; the engine's
        // prediction is flat in the sequence length (only the 1.5 us launch tail moves it), so
        // it is slow at long S. Holds today; a shape-aware attention model should make this fail
        // and then tighten the median bound above.
        const AttentionRow &longest = rows.back();
        const GpuSpec *h100 = Catalog::builtin().gpu(longest.gpu.toStdString());
        const ComputeModel m(*h100, Precision::Bf16);
        const double f = 4.0 * longest.batch * longest.heads * longest.seq * longest.seq
                         * longest.headDim;
        QVERIFY(f / m.attentionForward(f) / 1e12 < longest.measuredTflops);
    }
};

QTEST_APPLESS_MAIN(TestKernels)
#include "tst_kernels.moc"
