// The serving model end to end against published, measured serving runs (tests/data/serving/
// runs.txt, sources in its README): each run's configuration as a serving layout, priced as the
// source measured it (the whole system, or one disaggregated pool alone), its output tokens/s per
// GPU, tokens/s per user and prefill tokens/s per GPU against the measurement.
//
// Nothing in the engine is fitted to these rows: the model's constants come from hardware
// specifications and part-level measurements (tst_servingparts). The families L, G, V and D are
// held out (the README's "Held-out part": never to be fitted on, now or later); the test prints
// every row's error and the held-out medians, and fails when the model drifts past the errors
// measured when the rows were added (DESIGN.md's goal on the held-out part is 15%).
#include "base/jsoncursor.h"
#include "layout/layout.h"
#include "serving/servingband.h"
#include "serving/servingevaluate.h"
#include "topology/topology.h"

#include <QFile>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

using namespace railyard::engine;

namespace {

struct Run
{
    QString id;
    bool held = false;
    QStringList f; // the columns, as runs.txt's header names them
    QString col(const char *name) const
    {
        static const QStringList names
                = QStringLiteral("id held model gpu gpus nodes tp ep pp dp adp disagg "
                                 "phase isl osl conc prec kv spec stack out_gpu in_gpu user "
                                 "ttft_ms tol flags")
                          .split(QLatin1Char(' '));
        return f.value(names.indexOf(QLatin1String(name)));
    }
    int num(const char *name) const { return col(name).toInt(); }
    bool flag(const char *name) const
    {
        return col("flags").split(QLatin1Char(',')).contains(QLatin1String(name));
    }
};

std::vector<Run> readRuns()
{
    QFile file(QStringLiteral(RAILYARD_TEST_DATA "/serving/runs.txt"));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read serving/runs.txt");
    std::vector<Run> out;
    for (const QByteArray &line : file.readAll().split('\n')) {
        const QString l = QString::fromUtf8(line).trimmed();
        if (l.isEmpty() || l.startsWith(QLatin1Char('#')))
            continue;
        Run r;
        r.f = l.split(QLatin1Char(' '), Qt::SkipEmptyParts);
        if (r.f.size() != 26)
            qFatal("runs.txt: %d columns in \"%s\", expected 26", int(r.f.size()), qPrintable(l));
        r.id = r.f[0];
        r.held = r.f[1] == QLatin1String("1");
        out.push_back(r);
    }
    return out;
}

// The run as a serving layout. Per-GPU numbers divide by `gpus`: the whole system, or the pool
// the source measured alone (`phase`), which the layout then describes.
Json layoutOf(const Run &r, std::optional<int> concurrency)
{
    const int gpus = r.num("gpus"), nodes = r.num("nodes");
    const bool rack = r.col("gpu") == QLatin1String("GB200"); // every tray in one NVL72 rack
    Json d = Json::parse(R"({"format": "railyard-layout", "version": 1,
      "cluster": {"nic": {"model": "CX7-NDR", "gbps": 400, "per_gpu": 1},
                  "fabric": {"kind": "rail-optimized", "oversubscription": 1}}})");
    d["cluster"]["gpu"] = r.col("gpu").toStdString();
    d["cluster"]["nodes"] = nodes;
    d["cluster"]["gpus_per_node"] = gpus / nodes;
    d["cluster"]["nvlink_domain"] = rack ? gpus : gpus / nodes;
    d["model"] = Json{{"preset", r.col("model").toStdString()}};
    Json s = Json::object();
    const QString stack = r.col("stack");
    // DeepSeek's own engine is not a named stack: the generic one with DeepEP, its all-to-all.
    if (stack != QLatin1String("deepseek"))
        s["stack"] = stack.toStdString();
    if (r.num("ep") > 1)
        s["moe_dispatcher"] = "deepep"; // every MoE source here runs DeepEP or the stack's own
    s["precision"] = r.col("prec").toStdString();
    s["kv_precision"] = r.col("kv").toStdString();
    if (r.flag("fp8-block")) // DeepSeek's own FP8 checkpoint: 128 x 128 weight blocks
        s["fp8_scaling"] = "block";
    s["input_tokens"] = r.num("isl");
    // A decode pool held at a KV length (osl '-'): one token after the first, at that length.
    s["output_tokens"] = r.col("osl") == QLatin1String("-") ? 2 : r.num("osl");
    s["concurrency"] = concurrency.value_or(1);
    const QString phase = r.col("phase");
    if (phase != QLatin1String("both"))
        s["phase"] = phase.toStdString();
    const QString spec = r.col("spec");
    if (spec.startsWith(QLatin1String("mtp"))) {
        const QStringList p = spec.mid(3).split(QLatin1Char(':'));
        Json sp{{"method", "mtp"}, {"draft_tokens", p[0].toInt()}};
        if (p.size() > 1)
            sp["acceptance"] = p[1].toDouble();
        s["speculative"] = sp;
    }
    d["serving"] = s;
    Json par{{"tp", r.num("tp")}, {"ep", r.num("ep")}, {"pp", r.num("pp")}, {"dp", r.num("dp")}};
    if (r.num("adp") == 1)
        par["attention_dp"] = true;
    d["parallel"] = par;
    return d;
}

struct Priced
{
    bool ok = false;
    std::string error;
    ServingEvaluation e;
    double concurrency = 0;
};

Priced price(const Run &r)
{
    const auto evaluate = [&](std::optional<int> c) {
        const Layout l = parseLayout(layoutOf(r, c).dump(),
                                     (r.id + QStringLiteral(".json")).toStdString());
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        ServingOptions o;
        o.linkLoads = false;
        o.timeline = false;
        return evaluateServing(l, t, o);
    };
    Priced p;
    const QString conc = r.col("conc");
    std::optional<int> c;
    if (conc == QLatin1String("max") || conc == QLatin1String("kvfull")) {
        // An offline run fed at an infinite rate, or a batch chosen to fill the KV cache: the
        // batch is what the KV cache holds.
        // The activations grow with the batch, so what the cache holds settles in a few rounds.
        c = 1;
        for (int round = 0; round < 4; ++round) {
            const ServingEvaluation probe = evaluate(c);
            if (!probe.ok)
                return {false, probe.error, probe, 0};
            if (probe.maxConcurrency == *c)
                break;
            c = probe.maxConcurrency;
        }
    } else if (conc == QLatin1String("-") && r.col("phase") == QLatin1String("decode")) {
        // A production average without its batch: Little's law on the source's own numbers
        // (requests in flight = output tokens/s / tokens/s per user), a configuration, not a fit.
        c = int(std::lround(r.col("out_gpu").toDouble() * r.num("gpus") / r.col("user").toDouble()
                            / r.num("dp")));
    } else if (conc != QLatin1String("-") && conc != QLatin1String("inf")) {
        c = conc.toInt();
    }
    p.e = evaluate(c);
    p.ok = p.e.ok;
    p.error = p.e.error;
    p.concurrency = c.value_or(1);
    return p;
}

// One rate compared: its family (the id's letter), held out or not, and its error as a factor
// (max(model / measured, measured / model) - 1).
struct RateError
{
    QString family;
    bool held = false;
    double factor = 0;
};

double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

} // namespace

class TestServingRuns : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void publishedRuns()
    {
        const std::vector<Run> runs = readRuns();
        QCOMPARE(int(runs.size()), 50);
        // |error| by metric, held-out and fitted part apart.
        std::map<std::string, std::vector<double>> held, fit;
        int heldRows = 0;
        int skipped = 0;
        std::vector<RateError> rates; // every rate compared, for the band
        for (const Run &r : runs) {
            if (r.flag("offload")) {
                // Prefill weights partly in host memory: the engine keeps weights in HBM.
                qInfo("%s not priced: weights offloaded to host memory (the engine has no offload)",
                      qPrintable(r.id));
                ++skipped;
                continue;
            }
            const Priced p = price(r);
            QVERIFY2(p.ok,
                     qPrintable(r.id + QStringLiteral(": ") + QString::fromStdString(p.error)));
            const ServingEvaluation &e = p.e;
            heldRows += r.held;
            auto &bucket = r.held ? held : fit;
            QString line = QStringLiteral("%1 %2 %3 x%4 conc %5 (KV holds %6):")
                                   .arg(r.id,
                                        r.held ? QStringLiteral("held") : QStringLiteral("fit "))
                                   .arg(r.col("gpu"))
                                   .arg(r.num("gpus"))
                                   .arg(p.concurrency)
                                   .arg(e.maxConcurrency);
            const auto compare = [&](const char *what, double model, const QString &measured) {
                if (measured == QLatin1String("-"))
                    return;
                const double m = measured.toDouble();
                const double err = (model - m) / m;
                if (std::isfinite(model) && model > 0)
                    rates.push_back({r.id.left(1), r.held, std::max(model / m, m / model) - 1});
                QVERIFY2(std::isfinite(model) && model > 0,
                         qPrintable(r.id + QLatin1Char(' ') + what));
                bucket[what].push_back(std::abs(err));
                line += QStringLiteral(" %1 %2 vs %3 (%4%)")
                                .arg(QLatin1String(what))
                                .arg(model, 0, 'f', 1)
                                .arg(m)
                                .arg(100 * err, 0, 'f', 1);
            };
            compare("out_gpu", e.outputTokensPerSPerGpu, r.col("out_gpu"));
            compare("in_gpu", e.inputTokensPerSPerGpu, r.col("in_gpu"));
            // Per-user rates as each source defines them (runs.txt's header).
            double user = e.tokensPerSPerUser;
            if (r.flag("u-bench")) // output tokens over the request's latency, prefill included
                user = e.e2eLatencyS > 0 ? r.num("osl") / e.e2eLatencyS : 0;
            else if (r.flag("u-derived")) // out_gpu x gpus / conc
                user = e.outputTokensPerS / (p.concurrency * r.num("dp"));
            compare("user", user, r.col("user"));
            qInfo("%s", qPrintable(line));
            // Where the decode step's time goes (ms), to see what a miss points at.
            const ServingBreakdown &d = e.decode;
            if (d.sum() > 0)
                qInfo("    decode step %.3f ms: compute %.3f, weights %.3f, attention %.3f, tp "
                      "%.3f (%s), ep %.3f (%s), pp %.3f, overhead %.3f",
                      1e3 * e.decodeStepS,
                      1e3 * d.compute,
                      1e3 * d.weightsRead,
                      1e3 * d.attention,
                      1e3 * d.tp,
                      e.tpMethod.c_str(),
                      1e3 * d.ep,
                      e.epMethod.c_str(),
                      1e3 * d.pp,
                      1e3 * d.overhead);
        }
        QCOMPARE(heldRows + skipped, 15);
        QCOMPARE(skipped, 2); // G4, G5
        for (const auto &[what, errs] : held)
            qInfo("held out (L, G, V, D): %s median |error| %.1f%% over %d rows, largest %.1f%%",
                  what.c_str(),
                  100 * median(errs),
                  int(errs.size()),
                  100 * *std::max_element(errs.begin(), errs.end()));
        for (const auto &[what, errs] : fit)
            qInfo("fit part (T, P, S; nothing fitted yet): %s median |error| %.1f%% over %d rows",
                  what.c_str(),
                  100 * median(errs),
                  int(errs.size()));
        checkBand(rates);
        QCOMPARE(int(held["out_gpu"].size()), 10);
        QCOMPARE(int(held["user"].size()), 8);
        // The errors measured when these rows were added, rounded up: the model may get better,
        // not worse, without this test saying so (and servingband.cpp then widening its bands).
        QVERIFY2(median(held["out_gpu"]) <= kHeldOutputPerGpu, "held-out output tokens/s per GPU");
        QVERIFY2(median(held["user"]) <= kHeldPerUser, "held-out tokens/s per user");
    }

private:
    // The band the engine puts on its rates (servingband.h, kServingRunsBand) is the
    // kServingRunsBandCoverage quantile of the fitted families' errors (as factors: measured
    // within model / (1 + b) .. model x (1 + b)). Nothing is fitted to these rows, so each row's
    // error is already out of sample; what leave-one-family-out tests is the band: set from two
    // of T, P, S, does it hold its coverage on the third? And set from all three, on the
    // held-out families?
    static void checkBand(const std::vector<RateError> &rates)
    {
        const auto quantile = [](std::vector<double> v, double q) {
            std::sort(v.begin(), v.end());
            const double at = q * double(v.size() - 1);
            const std::size_t i = static_cast<std::size_t>(std::floor(at));
            const double f = at - double(i);
            return i + 1 < v.size() ? v[i] * (1 - f) + v[i + 1] * f : v.back();
        };
        const double q = kServingRunsBandCoverage;
        std::vector<double> fit;
        for (const RateError &e : rates)
            if (!e.held)
                fit.push_back(e.factor);
        int inside = 0, total = 0;
        for (const char *family : {"T", "P", "S"}) {
            std::vector<double> others;
            for (const RateError &e : rates)
                if (!e.held && e.family != QLatin1String(family))
                    others.push_back(e.factor);
            const double band = quantile(others, q);
            int in = 0, n = 0;
            for (const RateError &e : rates)
                if (!e.held && e.family == QLatin1String(family)) {
                    ++n;
                    in += e.factor <= band;
                }
            inside += in;
            total += n;
            qInfo("band from the fitted families but %s: x/%.2f .. x%.2f, holds %d of %d of %s's "
                  "rates",
                  family,
                  1 + band,
                  1 + band,
                  in,
                  n,
                  family);
        }
        const double band = quantile(fit, q);
        int heldIn = 0, heldN = 0;
        for (const RateError &e : rates)
            if (e.held) {
                ++heldN;
                heldIn += e.factor <= kServingRunsBand;
            }
        qInfo("band (%.0f%% of the %d fitted rates): factor %.3f, engine's %.3f; leave one family "
              "out holds %d of %d (%.0f%%); on the held-out families %d of %d (%.0f%%)",
              100 * q,
              int(fit.size()),
              1 + band,
              1 + kServingRunsBand,
              inside,
              total,
              100.0 * inside / total,
              heldIn,
              heldN,
              100.0 * heldIn / heldN);
        // The band holds what it claims out of sample: on the families left out in turn (33 of
        // 41 when set, and with the busiest EP rank priced) and on the held-out families (21 of
        // 21), at least its coverage less one rate in twenty.
        QVERIFY2(double(inside) / total >= q - 0.05, "leave-one-family-out coverage");
        QVERIFY2(double(heldIn) / heldN >= q - 0.05, "held-out coverage");
        // The engine's constant is this quantile (to the percent it is written with).
        QVERIFY2(std::abs(band - kServingRunsBand) <= 0.005,
                 qPrintable(QStringLiteral("kServingRunsBand is %1, the fitted rates give %2")
                                    .arg(kServingRunsBand)
                                    .arg(band)));
    }

    // Measured when the rows were added: 24.6% (10 rows) and 22.3% (8 rows); on the merged
    // engine (compute from kernel benchmarks at the sustained clock, the NIC model) 27.8% and
    // 26.1%; with MLA's NVFP4 attention in BF16, DeepEP's in-domain floor and the routing
    // kernels priced, 25.9% and 22.2%; with the decode steps on a fixed grid four points per
    // doubling (24 points from 1 to the top before: V1 read its step 5% off between points)
    // 28.7% and 23.2%; with each serving kernel paying a small kernel's measured time in a CUDA
    // graph (catalog graph_kernel_us, tst_servingparts::gemmOneToken) and a grouped expert GEMM
    // paying it once, 14.1% and 13.5%; with the busiest EP rank after EPLB setting the expert
    // GEMMs' pace (serving/servingcompute.h expertLoadImbalance), 13.7% and 12.3%. The bounds
    // are DESIGN.md's goal, 15%: the model may get better, not worse past the goal, without
    // this test saying so.
    static constexpr double kHeldOutputPerGpu = 0.15;
    static constexpr double kHeldPerUser = 0.15;
};

QTEST_APPLESS_MAIN(TestServingRuns)
#include "tst_servingruns.moc"
