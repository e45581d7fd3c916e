#include "kernelrows.h"

#include "layout/transformer.h"

#include <QFile>
#include <QTest>

#include <algorithm>
#include <cmath>

namespace railyard::kerneltest {

using namespace railyard::engine;

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

double gemmTflops(const GpuSpec &gpu, const GemmRow &r, bool sustained)
{
    const bool fp8 = r.dtype != QLatin1String("bf16");
    KernelChoice k;
    k.sustainedClock = sustained;
    const ComputeModel model(gpu, fp8 ? Precision::Fp8 : Precision::Bf16, k);
    return 2.0 * r.m * r.n * r.k / model.gemmKernel(r.m, r.n, r.k, fp8) / 1e12;
}

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

} // namespace railyard::kerneltest
