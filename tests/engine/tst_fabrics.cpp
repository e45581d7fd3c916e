#include "base/units.h"
#include "collectives/collective.h"
#include "layout/catalog.h"
#include "layout/layout.h"
#include "topology/topology.h"

#include <QFile>
#include <QTest>

#include "comparenear.h"

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

// A sweep's layout, read once: the fits price every sweep hundreds of times.
const Layout &layoutOf(const QString &name)
{
    static std::map<QString, Layout> cache;
    auto it = cache.find(name);
    if (it == cache.end())
        it = cache.emplace(name,
                           readLayoutFile(std::string(RAILYARD_TEST_DATA "/collectives/")
                                          + name.toStdString() + ".railyard.json"))
                     .first;
    return it->second;
}

std::vector<Priced> price(const std::vector<Sweep> &sweeps,
                          const Catalog &catalog,
                          const std::set<QString> &only = {})
{
    std::vector<Priced> out;
    for (const Sweep &s : sweeps) {
        if (!only.empty() && !only.count(s.source))
            continue;
        const Topology t = buildTopology(layoutOf(s.layout).cluster, catalog);
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

double median(std::vector<double> v);

double medianAbs(const std::vector<Priced> &priced)
{
    std::vector<double> e;
    for (const Priced &p : priced)
        e.push_back(std::abs(p.error()));
    return median(e);
}

double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The transport NCCL drives between a sweep's NVLink domains ("nvlink" when there is one
// domain), and the NIC model, read from its layout.
struct Fabric
{
    QString transport;
    std::string nic;
};

Fabric fabricOf(const Sweep &s, const Catalog &catalog)
{
    const Topology t = buildTopology(layoutOf(s.layout).cluster, catalog);
    if (t.localDomainCount() <= 1 || s.fabric == QLatin1String("nvlink"))
        return {QStringLiteral("nvlink"), {}};
    return {QString::fromStdString(t.nicModel().transport), t.nicModel().id};
}

// The catalog with some NICs' fitted constants replaced: the transport's cost per message and
// each NIC model's achieved fraction of line rate.
struct NicFit
{
    double messageUs = 0;
    std::map<std::string, double> efficiency;
};

Catalog withFit(const NicFit &fit)
{
    Catalog c = Catalog::builtin();
    std::string json = R"({"format": "railyard-catalog", "version": 1, "nics": [)";
    bool first = true;
    for (const auto &[id, eff] : fit.efficiency) {
        NicModel n = *c.nic(id);
        json += std::string(first ? "" : ",") + R"({"id": ")" + n.id + R"(", "fabric": ")"
                + n.fabric + R"(", "transport": ")" + n.transport + R"(", "gbit_per_s": )"
                + std::to_string(n.gbitPerS) + R"(, "efficiency": )" + std::to_string(eff)
                + R"(, "latency_us": )" + std::to_string(n.latencyUs) + R"(, "message_us": )"
                + std::to_string(fit.messageUs) + R"(, "multipath": )"
                + (n.multipath ? "true" : "false") + "}";
        first = false;
    }
    json += "]}";
    c.merge(Catalog::fromJsonText(json, "fit"));
    return c;
}

// What a fit minimizes: the mean |log(engine / measured)|, each point's share capped at
// log 1.3 (every point counts, where a median would let the fit ignore half of them; a point
// off by more than 30% is a mechanism the NIC's constants do not describe, and should not pull
// them: R3's small sizes, the forced trees of Y4/Y5).
double meanLogError(const std::vector<Priced> &priced)
{
    double sum = 0;
    for (const Priced &p : priced)
        sum += std::min(std::abs(std::log(p.model / p.measured)), std::log(1.3));
    return priced.empty() ? 0.0 : sum / double(priced.size());
}

// Golden-section search of f on [lo, hi].
template<class F>
double goldenMin(F f, double lo, double hi, int iterations)
{
    const double r = (std::sqrt(5.0) - 1) / 2;
    double a = lo, b = hi, c = b - r * (b - a), d = a + r * (b - a);
    double fc = f(c), fd = f(d);
    for (int i = 0; i < iterations; ++i) {
        if (fc < fd) {
            b = d;
            d = c;
            fd = fc;
            c = b - r * (b - a);
            fc = f(c);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + r * (b - a);
            fd = f(d);
        }
    }
    return (a + b) / 2;
}

// The minimum of f on [lo, hi]: a scan of `cells` steps, then a golden-section search in the
// best step's neighbourhood (an algorithm or protocol switch makes f jump, so a search over the
// whole range alone can settle beside a jump).
template<class F>
double scanMin(F f, double lo, double hi, int cells)
{
    const double step = (hi - lo) / cells;
    double best = lo, bestF = f(lo);
    for (int i = 1; i <= cells; ++i) {
        const double x = lo + i * step;
        if (const double fx = f(x); fx < bestF) {
            best = x;
            bestF = fx;
        }
    }
    const double refined = goldenMin(f, std::max(lo, best - step), std::min(hi, best + step), 8);
    return f(refined) < bestF ? refined : best;
}

// No NIC delivers more than its payload share of the wire: a 4 KiB RDMA MTU with ~70 bytes of
// headers (InfiniBand's LRH, BTH, RETH and CRCs; RoCE's Ethernet, IP, UDP and BTH) is 98%.
constexpr double kMaxEfficiency = 0.98;

// Whether NCCL's own tuning model describes the transport's messages: it was calibrated on
// InfiniBand (and RoCE speaks the same verbs), so their cost per message stays at 0 and only
// their efficiency is fitted.
bool ncclDescribes(const QString &transport)
{
    return transport == QLatin1String("ib") || transport == QLatin1String("roce");
}

// The NIC model a sweep's layout carries between its NVLink domains (a fit changes a NIC
// model's constants, never which model a layout has).
const std::string &nicOfLayout(const QString &layout)
{
    static std::map<QString, std::string> cache;
    auto it = cache.find(layout);
    if (it == cache.end())
        it = cache.emplace(layout,
                           buildTopology(layoutOf(layout).cluster, Catalog::builtin()).nicModel().id)
                     .first;
    return it->second;
}

// Fits a transport's constants on the sweeps of `sources`, starting from `start`: the cost per
// message, then each NIC model's efficiency (among those the sources measured), twice round.
// A NIC model's efficiency moves only the sweeps across that model: the others add a constant
// to the cost, so its search prices those sweeps alone (the same minimum, in a fraction of the
// time: the test ran 200 s under the sanitizers).
NicFit fitTransport(const std::vector<Sweep> &sweeps,
                    const std::set<QString> &sources,
                    const std::set<std::string> &nicsMeasured,
                    NicFit start,
                    bool fitMessage)
{
    NicFit fit = start;
    const auto costOver = [&](const std::vector<Sweep> &over, const NicFit &f) {
        return meanLogError(price(over, withFit(f), sources));
    };
    for (int round = 0; round < 2; ++round) {
        if (fitMessage)
            fit.messageUs = scanMin(
                    [&](double m) {
                        NicFit f = fit;
                        f.messageUs = m;
                        return costOver(sweeps, f);
                    },
                    0,
                    250,
                    10);
        for (auto &entry : fit.efficiency) {
            // A named copy: clang (C++20) does not let a lambda capture a structured binding.
            const auto id = entry.first;
            if (!nicsMeasured.count(id))
                continue;
            std::vector<Sweep> across;
            for (const Sweep &s : sweeps)
                if (nicOfLayout(s.layout) == id)
                    across.push_back(s);
            entry.second = scanMin(
                    [&](double e) {
                        NicFit f = fit;
                        f.efficiency[id] = e;
                        return costOver(across, f);
                    },
                    0.3,
                    kMaxEfficiency,
                    14);
        }
    }
    return fit;
}

QString sizeText(double bytes)
{
    const double gib = bytes / (1024.0 * 1024 * 1024);
    if (gib >= 1)
        return QString::number(gib, 'g', 3) + QStringLiteral("GiB");
    return QString::number(bytes / (1024.0 * 1024), 'g', 3) + QStringLiteral("MiB");
}

// The sweep's largest size alone.
Sweep largestOf(const Sweep &s)
{
    Sweep largest = s;
    largest.points = {
            *std::max_element(s.points.begin(), s.points.end(), [](const Point &a, const Point &b) {
                return a.bytes < b.bytes;
            })};
    return largest;
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
        // Bounds a little above today's medians (nvlink 4.6%, ib 6.1%, roce 10.9%, efa 7.4%,
        // tcpxo 14.5%): a change that makes a fabric worse fails here.
        const std::map<QString, double> bound = {{QStringLiteral("nvlink"), 0.06},
                                                 {QStringLiteral("ib"), 0.08},
                                                 {QStringLiteral("roce"), 0.12},
                                                 {QStringLiteral("efa"), 0.08},
                                                 {QStringLiteral("tcpxo"), 0.16}};
        for (const auto &[fabric, errors] : byFabric) {
            const auto within = std::count_if(errors.begin(), errors.end(), [](double e) {
                return e <= 0.15;
            });
            qInfo("fabric %-7s %3zu points: median |error| %5.1f%%, within 15%%: %lld",
                  qPrintable(fabric),
                  errors.size(),
                  100 * median(errors),
                  static_cast<long long>(within));
            QVERIFY2(bound.count(fabric), qPrintable(fabric));
            QVERIFY2(median(errors) <= bound.at(fabric),
                     qPrintable(fabric + QStringLiteral(": median above its bound")));
        }
        QCOMPARE(byFabric.size(), bound.size());
    }

    // The cases the held-back set missed: the first EFA generation's achieved rate with one
    // 100G NIC per two A100 is priced now; the all-gather of 2 GiB at 32 RoCE nodes of 8 H100
    // (nccl#1218, collectives.md Y6) is not: the engine runs a ring at 273 GB/s where 200 were
    // measured (+37%), a known miss with one measured point behind it.
    void heldBackMisses_data()
    {
        QTest::addColumn<QString>("id");
        QTest::addColumn<double>("tolerance");
        QTest::newRow("Y6 all-gather, 32 nodes (known miss)") << "Y6ag" << 0.05;
        QTest::newRow("Y3 p4dn, 2 nodes") << "Y3b" << 0.15;
        QTest::newRow("Y3 p4dn, 3 nodes") << "Y3c" << 0.10;
        QTest::newRow("Y3 p4dn, 4 nodes") << "Y3d" << 0.05;
        // Forced trees between GB200 partitions over InfiniBand (nccl#1801): bound by the
        // NICs, past the 24 GB/s a channel NCCL's model caps Blackwell's tree at (-11.5% and
        // -15.1%; -59% and -60% at that cap).
        QTest::newRow("Y4 GB200 NVL4 x 3, tree") << "Y4t" << 0.20;
        QTest::newRow("Y5 GB200 NVL8 x 3, tree") << "Y5t" << 0.20;
    }
    void heldBackMisses()
    {
        QFETCH(QString, id);
        QFETCH(double, tolerance);
        std::vector<Sweep> one;
        for (const Sweep &s : m_sweeps)
            if (s.id == id)
                one.push_back(s);
        QCOMPARE(one.size(), std::size_t(1));
        const std::vector<Priced> p = price(one, Catalog::builtin());
        QCOMPARE(p.size(), std::size_t(1));
        qInfo("%s: engine %.1f GB/s (%s), measured %.1f, error %+.1f%%",
              qPrintable(id),
              p[0].model,
              p[0].algorithm.c_str(),
              p[0].measured,
              100 * p[0].error());
        if (id == QLatin1String("Y6ag"))
            QEXPECT_FAIL("",
                         "Y6ag: all-gather at 32 RoCE nodes priced at 273 GB/s, measured 200 "
                         "(+37%), not traced",
                         Continue);
        QVERIFY2(std::abs(p[0].error()) <= tolerance, qPrintable(QString::number(p[0].error())));
    }

    // NCCL chooses by its own model, whose ceiling on Blackwell's tree across three or more
    // nodes makes it run rings between GB200 partitions over InfiniBand ("ring, default" in
    // nccl#1801), although a forced tree is faster there: the engine chooses as NCCL does.
    void ncclStillChoosesRingsBetweenGb200Partitions()
    {
        for (const char *name : {"gb200-3trays-ib", "gb200-3x8-ib"}) {
            Layout l = layoutOf(QLatin1String(name));
            l.cluster.tuning.nvls = false; // NCCL_NVLS_ENABLE=0, as measured
            const Topology t = buildTopology(l.cluster, Catalog::builtin());
            CollectiveRequest req;
            req.op = CollectiveOp::AllReduce;
            req.bytes = 16.0 * (1ull << 30);
            const CollectiveResult chosen = estimateCollective(t, req);
            QCOMPARE(chosen.algorithm, Algorithm::Ring);
            req.algorithm = Algorithm::Tree;
            const CollectiveResult tree = estimateCollective(t, req);
            QVERIFY2(tree.busbwGBps > 1.05 * chosen.busbwGBps, name); // though a tree is faster
        }
    }

    // Each transport's constants refitted with each source left out, and that source priced
    // with the refit: out of sample beside in sample (the catalog's constants).
    void leaveOneSourceOut()
    {
        const Catalog &catalog = Catalog::builtin();
        std::map<QString, std::vector<const Sweep *>> byTransport;
        std::map<QString, std::set<std::string>> nicsOf;
        std::map<QString, std::string> nicOfSource;
        for (const Sweep &s : m_sweeps) {
            const Fabric f = fabricOf(s, catalog);
            if (f.transport == QLatin1String("nvlink"))
                continue;
            byTransport[f.transport].push_back(&s);
            nicsOf[f.transport].insert(f.nic);
            nicOfSource[s.source] = f.nic;
        }
        for (const auto &[transport, pointers] : byTransport) {
            // The transport's sweeps alone (a source may also have measured inside one
            // NVLink domain, where the NIC plays no part).
            std::vector<Sweep> sweeps;
            std::set<QString> sources;
            for (const Sweep *s : pointers) {
                sweeps.push_back(*s);
                sources.insert(s->source);
            }
            NicFit inCatalog;
            for (const std::string &id : nicsOf[transport]) {
                inCatalog.efficiency[id] = catalog.nic(id)->efficiency;
                inCatalog.messageUs = catalog.nic(id)->messageUs;
            }
            const bool fitMessage = !ncclDescribes(transport);
            const NicFit all = fitTransport(sweeps,
                                            sources,
                                            nicsOf[transport],
                                            inCatalog,
                                            fitMessage);
            QString fitted;
            for (const auto &[id, eff] : all.efficiency)
                fitted += QStringLiteral(" %1 %2 (catalog %3)")
                                  .arg(QString::fromStdString(id))
                                  .arg(eff, 0, 'f', 3)
                                  .arg(inCatalog.efficiency[id], 0, 'f', 3);
            qInfo("%s: all %zu sources fit message %.1f us (catalog %.1f), efficiency%s",
                  qPrintable(transport),
                  sources.size(),
                  all.messageUs,
                  inCatalog.messageUs,
                  qPrintable(fitted));
            // The catalog holds what every source together gives, to 5 us and 0.025 (NDR
            // InfiniBand's fit sits on the 0.98 cap; the catalog keeps the published 0.96:
            // 46-49 GB/s per NIC, nccl-tests#290 and #267).
            QVERIFY2(std::abs(all.messageUs - inCatalog.messageUs) <= 5, qPrintable(transport));
            for (const auto &[id, eff] : all.efficiency)
                QVERIFY2(std::abs(eff - inCatalog.efficiency[id]) <= 0.025, id.c_str());
            std::vector<double> in, out;
            for (const QString &held : sources) {
                std::set<QString> rest = sources;
                rest.erase(held);
                std::set<std::string> measured;
                for (const QString &r : rest)
                    measured.insert(nicOfSource[r]);
                NicFit start = inCatalog;
                // A NIC model no other source measured: the transport's other models' fit.
                const std::string heldNic = nicOfSource[held];
                const std::vector<Priced> inSample = price(sweeps, catalog, {held});
                if (rest.empty()) {
                    qInfo("  %-14s %3zu points: in sample %5.1f%%; the only source of %s (no "
                          "out-of-sample check)",
                          qPrintable(held),
                          inSample.size(),
                          100 * medianAbs(inSample),
                          qPrintable(transport));
                    for (const Priced &p : inSample)
                        in.push_back(std::abs(p.error()));
                    continue;
                }
                NicFit refit = fitTransport(sweeps, rest, measured, start, fitMessage);
                if (!measured.count(heldNic)) {
                    double sum = 0;
                    int count = 0;
                    for (const std::string &id : measured) {
                        sum += refit.efficiency[id];
                        ++count;
                    }
                    refit.efficiency[heldNic] = sum / count;
                }
                const std::vector<Priced> outSample = price(sweeps, withFit(refit), {held});
                qInfo("  %-14s %3zu points: in sample %5.1f%%, left out %5.1f%% (refit: message "
                      "%.1f us, %s efficiency %.3f%s)",
                      qPrintable(held),
                      inSample.size(),
                      100 * medianAbs(inSample),
                      100 * medianAbs(outSample),
                      refit.messageUs,
                      heldNic.c_str(),
                      refit.efficiency[heldNic],
                      measured.count(heldNic) ? "" : ", from the transport's other NICs");
                for (const Priced &p : inSample)
                    in.push_back(std::abs(p.error()));
                for (const Priced &p : outSample)
                    out.push_back(std::abs(p.error()));
            }
            if (out.empty()) {
                // One source (TCPXO): nothing to hold out, and no out-of-sample figure.
                qInfo("%s: median |error| in sample %.1f%% (%zu points), no out-of-sample check",
                      qPrintable(transport),
                      100 * median(in),
                      in.size());
                QCOMPARE(sources.size(), std::size_t(1));
                continue;
            }
            qInfo("%s: median |error| in sample %.1f%% (%zu points), out of sample %.1f%% (%zu)",
                  qPrintable(transport),
                  100 * median(in),
                  in.size(),
                  100 * median(out),
                  out.size());
            // Today's out-of-sample medians (ib 5.7%, roce 24.6%, efa 21.2%: RoCE's two sources
            // are one known miss, nccl#1218 at 32 nodes, and nccl#1221, which the other does not
            // predict; EFA's are two NIC generations, and neither predicts the other), guarded a
            // little above.
            const std::map<QString, double> bound = {{QStringLiteral("ib"), 0.08},
                                                     {QStringLiteral("roce"), 0.27},
                                                     {QStringLiteral("efa"), 0.24}};
            QVERIFY2(bound.count(transport), qPrintable(transport));
            QVERIFY2(median(out) <= bound.at(transport), qPrintable(transport));
        }
    }

    // NVLink 5's achieved rates, from its sweeps on NVLink alone, each at its largest size: the
    // rings' share of the link (the catalog's nvlink.efficiency, one for B200, GB200 and GB300:
    // the median over the sweeps the engine prices as a ring), and each GPU's NVLink SHARP share
    // (nvls_efficiency, from its own NVLS sweeps; GB300 has none and takes GB200's, the same
    // NVL72 system). Checked as measured against the engine at the catalog's values: a median
    // of 1 is the catalog saying what the sweeps say.
    void nvlink5FromSweeps()
    {
        const Catalog &catalog = Catalog::builtin();
        std::vector<double> ring;
        std::map<std::string, std::vector<double>> nvls;
        for (const Sweep &s : m_sweeps) {
            const std::string gpu = layoutOf(s.layout).cluster.gpu;
            if (s.fabric != QLatin1String("nvlink") || catalog.gpu(gpu)->nvlink.generation != 5
                || s.op == QLatin1String("all_to_all"))
                continue;
            const Priced p = price({largestOf(s)}, catalog).front();
            qInfo("%s %s %s: measured %.1f GB/s, engine %.1f (%s): %.3f",
                  qPrintable(s.id),
                  gpu.c_str(),
                  qPrintable(s.op),
                  p.measured,
                  p.model,
                  p.algorithm.c_str(),
                  p.measured / p.model);
            if (p.algorithm == "ring")
                ring.push_back(p.measured / p.model);
            else if (p.algorithm == "nvls")
                nvls[gpu].push_back(p.measured / p.model);
        }
        // Azure's forced ring on a GB200 tray, Oracle's GB200 and GB300 trays, B200's
        // all-gather and reduce-scatter.
        QCOMPARE(ring.size(), std::size_t(5));
        const double ringEfficiency = catalog.gpu("GB200")->nvlink.efficiency;
        qInfo("NVLink 5 rings: median %.3f of the engine at %.3f: %.3f",
              median(ring),
              ringEfficiency,
              ringEfficiency * median(ring));
        QVERIFY(std::abs(median(ring) - 1) <= 0.006);
        for (const char *gpu : {"B200", "GB200", "GB300"})
            QCOMPARE(catalog.gpu(gpu)->nvlink.efficiency, ringEfficiency);
        QCOMPARE(nvls.size(), std::size_t(2)); // B200 (one server), GB200 (one NVL72 rack)
        for (const auto &[gpu, r] : nvls) {
            const double inCatalog = catalog.gpu(gpu)->nvlsEfficiency;
            qInfo("%s NVLS: median %.3f of the engine at %.3f: %.3f",
                  gpu.c_str(),
                  median(r),
                  inCatalog,
                  inCatalog * median(r));
            QVERIFY2(std::abs(median(r) - 1) <= 0.006, gpu.c_str());
        }
        QCOMPARE(catalog.gpu("GB300")->nvlsEfficiency, catalog.gpu("GB200")->nvlsEfficiency);
    }

    // A send inside one server runs on the channels NCCL gives it at its size (p2pChannels:
    // src/enqueue.cc at v2.29.3-1), each moving what one channel moves on that NVLink
    // (p2p_channel_gbps): the catalog's is the median, over B200's sendrecv points from 64 MiB up
    // (among 2, 4 and 8 GPUs), of measured over channels.
    void p2pChannelsFromSweeps()
    {
        QCOMPARE(p2pChannels(64.0 * (1 << 20), 8), 4); // a part of 16 MiB: not above 32 chunks
        QCOMPARE(p2pChannels(256.0 * (1 << 20), 8), 16);
        QCOMPARE(p2pChannels(1024.0 * (1 << 20), 8), 32);
        QCOMPARE(p2pChannels(64.0 * (1 << 20), 2), 16);
        QCOMPARE(p2pChannels(16.0 * (1 << 20), 4), 8);
        QCOMPARE(p2pChannels(128.0 * 1024, 8), 2); // at most one channel per 64 KiB
        std::vector<double> perChannel;
        for (const Sweep &s : m_sweeps) {
            if (s.fabric != QLatin1String("nvlink") || s.op != QLatin1String("sendrecv"))
                continue;
            const Topology t = buildTopology(layoutOf(s.layout).cluster, Catalog::builtin());
            const int ranks
                    = s.gpus == QLatin1String("-")
                              ? t.gpuCount()
                              : int(parseIndexList(s.gpus.toStdString(), t.gpuCount()).size());
            for (const Point &p : s.points)
                if (p.bytes >= 64.0 * (1 << 20))
                    perChannel.push_back(p.measured / p2pChannels(p.bytes, ranks));
        }
        QCOMPARE(perChannel.size(), std::size_t(15)); // 2, 4 and 8 GPUs, 64 MiB to 16 GiB
        const double inCatalog = Catalog::builtin().gpu("B200")->p2pChannelGBps;
        qInfo("B200 sendrecv: median %.2f GB/s a channel (%.2f .. %.2f), catalog %.2f",
              median(perChannel),
              *std::min_element(perChannel.begin(), perChannel.end()),
              *std::max_element(perChannel.begin(), perChannel.end()),
              inCatalog);
        QVERIFY(std::abs(median(perChannel) - inCatalog) <= 0.1);
        for (const char *gpu : {"GB200", "GB300"}) // NVLink 5 too: no sweep of their own
            QCOMPARE(Catalog::builtin().gpu(gpu)->p2pChannelGBps, inCatalog);
        // The rule is NCCL's for ranks on one host: 8 GPUs of a B200 server send 64 MiB on 4 of
        // 32 channels; 8 GPUs on two trays of an NVL72 rack are two hosts, which NCCL splits by
        // its multi-node rule (not priced: the links' rate).
        CollectiveRequest send;
        send.op = CollectiveOp::SendRecv;
        send.bytes = 64.0 * (1 << 20);
        const Topology server = buildTopology(layoutOf(QStringLiteral("b200-1node")).cluster,
                                              Catalog::builtin());
        const Topology rack = buildTopology(layoutOf(QStringLiteral("gb200-nvl72-1rack")).cluster,
                                            Catalog::builtin());
        const double inServer = estimateCollective(server, send).busbwGBps;
        send.gpus = {0, 1, 2, 3, 4, 5, 6, 7};
        const double acrossTrays = estimateCollective(rack, send).busbwGBps;
        qInfo("64 MiB sendrecv among 8 GPUs: %.0f GB/s in a B200 server, %.0f across two GB200 "
              "trays",
              inServer,
              acrossTrays);
        RAILYARD_COMPARE_NEAR(inServer, 4 * inCatalog, 0.05);
        QVERIFY(acrossTrays > 4 * inServer);
    }

    // All-to-all inside an NVLink domain reaches less than the rings' NVLink rate: the catalog's
    // nvlink_alltoall_efficiency is the median, over a GPU's all-to-all sweeps on NVLink alone,
    // of measured against the engine at the rings' rate (each sweep's largest size).
    void nvlinkAllToAllFromSweeps()
    {
        Catalog ringRate = Catalog::builtin();
        for (const char *id : {"B200", "GB200", "GB300"}) {
            GpuSpec g = *ringRate.gpu(id);
            g.nvlinkAllToAllEfficiency = 1;
            ringRate.setGpu(g);
        }
        std::map<std::string, std::vector<double>> ratios;
        for (const Sweep &s : m_sweeps) {
            if (s.fabric != QLatin1String("nvlink") || s.op != QLatin1String("all_to_all"))
                continue;
            const std::vector<Priced> p = price({largestOf(s)}, ringRate);
            const std::string gpu = layoutOf(s.layout).cluster.gpu;
            ratios[gpu].push_back(p[0].measured / p[0].model);
            qInfo("%s %s: measured %.1f GB/s, %.3f of the rings' NVLink rate",
                  qPrintable(s.id),
                  gpu.c_str(),
                  p[0].measured,
                  p[0].measured / p[0].model);
        }
        // B200 (one server), GB200 and GB300 (one tray, two, sixteen).
        const std::map<std::string, std::size_t> sweeps = {{"B200", 1}, {"GB200", 3}, {"GB300", 3}};
        QCOMPARE(ratios.size(), sweeps.size());
        for (const auto &[gpu, r] : ratios) {
            QCOMPARE(r.size(), sweeps.at(gpu));
            const double inCatalog = Catalog::builtin().gpu(gpu)->nvlinkAllToAllEfficiency;
            qInfo("%s: median %.3f, catalog %.3f", gpu.c_str(), median(r), inCatalog);
            QVERIFY2(std::abs(median(r) - inCatalog) <= 0.005, gpu.c_str());
        }
    }

private:
    std::vector<Sweep> m_sweeps;
};

QTEST_APPLESS_MAIN(TestFabrics)
#include "tst_fabrics.moc"
