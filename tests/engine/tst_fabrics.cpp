#include "base/units.h"
#include "collectives/collective.h"
#include "layout/catalog.h"
#include "layout/layout.h"
#include "topology/topology.h"

#include <QFile>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

using namespace railyard::engine;

// Collectives validated fabric by fabric: the nccl-tests sweeps of
// tests/data/collectives/sweeps.txt, each point priced on its layout and printed engine against
// measured by size, with each fabric's median |error|. The NIC constants the catalog fits from
// these sweeps (its achieved fraction of line rate and its per-message latency, per transport)
// are refitted with each source left out in turn, and the left-out source priced with the refit:
// the out-of-sample error beside the in-sample one.
namespace {

struct Point
{
    double bytes = 0;
    double measured = 0;
};

struct Sweep
{
    QString id, fabric, layout, op, gpus, algo, source;
    std::vector<Point> points;
};

std::vector<Sweep> readSweeps()
{
    const QString path = QStringLiteral(RAILYARD_TEST_DATA "/collectives/sweeps.txt");
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(path));
    std::vector<Sweep> out;
    int line = 0;
    while (!f.atEnd()) {
        ++line;
        const QString text = QString::fromUtf8(f.readLine(4096)).trimmed();
        if (text.isEmpty() || text.startsWith(QLatin1Char('#')))
            continue;
        const QStringList c = text.split(QLatin1Char(' '), Qt::SkipEmptyParts);
        const auto bad = [&](const char *why) {
            qFatal("sweeps.txt:%d: %s: %s", line, why, qPrintable(text));
        };
        if (c[0] == QLatin1String("sweep")) {
            if (c.size() != 8)
                bad("expected sweep ID FABRIC LAYOUT OP GPUS ALGO SOURCE");
            out.push_back({c[1], c[2], c[3], c[4], c[5], c[6], c[7], {}});
            continue;
        }
        if (out.empty() || c.size() != 2)
            bad("expected SIZE BUSBW after a sweep line");
        bool ok = false;
        const double measured = c[1].toDouble(&ok);
        if (!ok || measured <= 0)
            bad("expected a positive bus bandwidth");
        out.back().points.push_back({double(parseSize(c[0].toStdString())), measured});
    }
    return out;
}

CollectiveOp opOf(const QString &s)
{
    const auto op = collectiveOpFromString(s.toStdString());
    if (!op)
        qFatal("sweeps.txt: unknown collective %s", qPrintable(s));
    return *op;
}

Algorithm algoOf(const QString &s)
{
    const auto a = algorithmFromString(s.toStdString());
    if (!a)
        qFatal("sweeps.txt: unknown algorithm %s", qPrintable(s));
    return *a;
}

struct Priced
{
    const Sweep *sweep = nullptr;
    double bytes = 0, measured = 0, model = 0;
    std::string algorithm;
    double error() const { return (model - measured) / measured; }
};

std::vector<Priced> price(const std::vector<Sweep> &sweeps,
                          const Catalog &catalog,
                          const std::set<QString> &only = {})
{
    std::vector<Priced> out;
    for (const Sweep &s : sweeps) {
        if (!only.empty() && !only.count(s.source))
            continue;
        const Layout l = readLayoutFile(std::string(RAILYARD_TEST_DATA "/collectives/")
                                        + s.layout.toStdString() + ".railyard.json");
        const Topology t = buildTopology(l.cluster, catalog);
        for (const Point &p : s.points) {
            CollectiveRequest req;
            req.op = opOf(s.op);
            req.bytes = p.bytes;
            req.algorithm = algoOf(s.algo);
            if (s.gpus != QLatin1String("-"))
                req.gpus = parseIndexList(s.gpus.toStdString(), t.gpuCount());
            const CollectiveResult r = estimateCollective(t, req);
            out.push_back({&s, p.bytes, p.measured, r.busbwGBps, toString(r.algorithm)});
        }
    }
    return out;
}

double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

QString sizeText(double bytes)
{
    const double gib = bytes / (1024.0 * 1024 * 1024);
    if (gib >= 1)
        return QString::number(gib, 'g', 3) + QStringLiteral("GiB");
    return QString::number(bytes / (1024.0 * 1024), 'g', 3) + QStringLiteral("MiB");
}

} // namespace

class TestFabrics : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { m_sweeps = readSweeps(); }

    // Every point, engine against measured, and each fabric's median |error|.
    void sweepsByFabric()
    {
        const std::vector<Priced> priced = price(m_sweeps, Catalog::builtin());
        std::map<QString, std::vector<double>> byFabric;
        for (const Priced &p : priced) {
            qInfo("%-8s %-6s %-10s %8s  engine %6.1f GB/s (%-9s) measured %6.1f  error %+6.1f%%",
                  qPrintable(p.sweep->id),
                  qPrintable(p.sweep->fabric),
                  qPrintable(p.sweep->op),
                  qPrintable(sizeText(p.bytes)),
                  p.model,
                  p.algorithm.c_str(),
                  p.measured,
                  100 * p.error());
            byFabric[p.sweep->fabric].push_back(std::abs(p.error()));
        }
        for (const auto &[fabric, errors] : byFabric) {
            const auto within = std::count_if(errors.begin(), errors.end(), [](double e) {
                return e <= 0.15;
            });
            qInfo("fabric %-7s %3zu points: median |error| %5.1f%%, within 15%%: %lld",
                  qPrintable(fabric),
                  errors.size(),
                  100 * median(errors),
                  static_cast<long long>(within));
        }
        QVERIFY(!priced.empty());
    }

private:
    std::vector<Sweep> m_sweeps;
};

QTEST_APPLESS_MAIN(TestFabrics)
#include "tst_fabrics.moc"
