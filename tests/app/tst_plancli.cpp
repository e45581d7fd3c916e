// `railyard plan`: the JSON contract of DESIGN.md, --top, the ordering by --objective, usage
// errors (exit 2), a model that fits nowhere (exit 1, a clear message), --buy. Runs the real
// executable, as scripts do.
#include "clirun.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include "comparenear.h"
#include <cmath>

class TestPlanCli : public QObject
{
    Q_OBJECT

    struct Run
    {
        int exitCode;
        QString out;
        QString err;
    };

    static Run run(const QStringList &args)
    {
        const railyard::test::CliRun r = railyard::test::runCli(args);
        return {r.exitCode, QString::fromUtf8(r.out), r.errText()};
    }
    static QString data(const char *name) { return QStringLiteral(RAILYARD_TEST_DATA "/") + name; }
    static QJsonObject json(const Run &r)
    {
        QJsonParseError pe;
        const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8(), &pe).object();
        if (pe.error != QJsonParseError::NoError)
            qWarning("not JSON: %s\n%s", qPrintable(pe.errorString()), qPrintable(r.err));
        return o;
    }
    static double num(const QJsonObject &o, const char *key)
    {
        return o.value(QLatin1String(key)).toDouble();
    }

private Q_SLOTS:
    void jsonContract()
    {
        const Run r = run({"plan", data("example.railyard.json"), "--json", "--top", "5"});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject o = json(r);
        QCOMPARE(o.value("gpus").toInt(), 128);
        QCOMPARE(o.value("objective").toString(), QStringLiteral("step_time"));
        QVERIFY(num(o, "evaluated") > num(o, "fitting"));
        QVERIFY(num(o, "fitting") >= 5);
        QVERIFY(num(o, "elapsed_s") > 0);
        const QJsonArray plans = o.value("plans").toArray();
        QCOMPARE(plans.size(), 5);
        for (const auto &v : plans) {
            const QJsonObject p = v.toObject();
            const QJsonObject par = p.value("parallel").toObject();
            const int tp = par.value("tp").toInt(), cp = par.value("cp").toInt(),
                      pp = par.value("pp").toInt(), dp = par.value("dp").toInt();
            QCOMPARE(tp * cp * pp * dp, 128);
            QVERIFY(par.contains("ep") && par.contains("vp"));
            const QJsonObject t = p.value("training").toObject();
            QVERIFY(t.value("micro_batch").toInt() >= 1);
            QCOMPARE(t.value("micro_batches").toInt() * t.value("micro_batch").toInt() * dp, 256);
            QVERIFY(QStringList({"none", "selective", "full"})
                            .contains(t.value("recompute").toString()));
            QVERIFY(t.value("optimizer").toObject().contains("zero_stage"));
            QVERIFY(t.value("optimizer").toObject().contains("fsdp"));
            const double step = num(p, "step_time_s");
            QVERIFY(step > 0);
            QVERIFY(num(p, "memory_gib_per_gpu") <= num(o, "hbm_gib"));
            double sum = 0;
            const QJsonObject b = p.value("breakdown_s").toObject();
            for (const char *k :
                 {"compute", "tp", "cp", "ep", "pp_bubble", "pp_p2p", "dp", "optimizer"}) {
                QVERIFY2(b.contains(k), k);
                sum += b.value(k).toDouble();
            }
            RAILYARD_COMPARE_NEAR(sum, step, 1e-9);
            RAILYARD_COMPARE_NEAR(num(p, "tokens_per_s"), 256.0 * 8192 / step, 1e-6);
            // $3.20 per GPU-hour (the layout's price) on 128 GPUs.
            RAILYARD_COMPARE_ABS(num(p, "cost_per_step"), 3.2 * 128 * step / 3600, 1e-9);
        }

        // The best plan, applied to the layout, is what `railyard evaluate` prices (0.5%).
        const QJsonObject best = plans.first().toObject();
        QFile in(data("example.railyard.json"));
        QVERIFY(in.open(QIODevice::ReadOnly));
        QJsonObject layout = QJsonDocument::fromJson(in.readAll()).object();
        QJsonObject parallel = best.value("parallel").toObject();
        layout["parallel"] = parallel;
        QJsonObject training = layout.value("training").toObject();
        const QJsonObject bt = best.value("training").toObject();
        training["micro_batch"] = bt.value("micro_batch");
        training["recompute"] = bt.value("recompute");
        training["optimizer"] = bt.value("optimizer");
        layout["training"] = training;
        QTemporaryDir dir;
        const QString path = dir.filePath("applied.railyard.json");
        QFile out(path);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(QJsonDocument(layout).toJson());
        out.close();
        const Run e = run({"evaluate", path, "--json", "--no-links"});
        QVERIFY2(e.exitCode == 0, qPrintable(e.err));
        const double full = num(json(e), "step_time_s");
        // The plan's band is the evaluation's for the same regime, which the evaluation widens
        // to the stacks it may be running, since the layout names none (both say so); its order
        // is what was applied.
        const QJsonArray band = best.value("step_time_band_s").toArray();
        const QJsonArray fullBand = json(e).value("step_time_band_s").toArray();
        QCOMPARE(band.size(), 2);
        QCOMPARE(fullBand.size(), 2);
        const QString planBasis = best.value("step_time_band_basis").toString();
        const QString fullBasis = json(e).value("step_time_band_basis").toString();
        QVERIFY2(fullBasis.startsWith(planBasis.section(QLatin1Char(';'), 0, 0)),
                 qPrintable(fullBasis));
        QVERIFY2(planBasis.contains("no software stack named"), qPrintable(planBasis));
        QVERIFY2(fullBasis.contains("no software stack named"), qPrintable(fullBasis));
        QVERIFY(fullBand[1].toDouble() / full
                >= band[1].toDouble() / num(best, "step_time_s") - 1e-9);
        QVERIFY(fullBand[0].toDouble() / full
                <= band[0].toDouble() / num(best, "step_time_s") + 1e-9);
        QVERIFY(band[0].toDouble() < num(best, "step_time_s"));
        QVERIFY(!best.value("step_time_band_basis").toString().isEmpty());
        QVERIFY(QStringList({"tp-cp-ep-dp-pp", "tp-cp-ep-pp-dp"})
                        .contains(parallel.value("order").toString()));
        RAILYARD_COMPARE_NEAR(num(best, "step_time_s"), full, 0.005);
    }

    void topDefaultsToTen()
    {
        const Run r = run({"plan", data("example-moe.railyard.json"), "--json"});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(json(r).value("plans").toArray().size(), 10);
        const Run one = run({"plan", data("example-moe.railyard.json"), "--json", "--top=1"});
        QCOMPARE(json(one).value("plans").toArray().size(), 1);
        // The first of ten is the one.
        QCOMPARE(json(one).value("plans").toArray().first().toObject().value("parallel"),
                 json(r).value("plans").toArray().first().toObject().value("parallel"));
    }

    void objectiveOrders_data()
    {
        QTest::addColumn<QString>("objective");
        QTest::addColumn<QString>("key");
        QTest::addColumn<bool>("ascending");
        QTest::newRow("step_time") << "step_time"
                                   << "step_time_s" << true;
        QTest::newRow("cost") << "cost"
                              << "cost_per_step" << true;
        QTest::newRow("tokens_per_dollar") << "tokens_per_dollar"
                                           << "tokens_per_dollar" << false;
    }
    void objectiveOrders()
    {
        QFETCH(QString, objective);
        QFETCH(QString, key);
        QFETCH(bool, ascending);
        const Run r = run({"plan",
                           data("example.railyard.json"),
                           "--json",
                           "--top",
                           "20",
                           "--objective",
                           objective});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject o = json(r);
        QCOMPARE(o.value("objective").toString(), objective);
        const QJsonArray plans = o.value("plans").toArray();
        QCOMPARE(plans.size(), 20);
        for (int i = 1; i < plans.size(); ++i) {
            const double a = plans[i - 1].toObject().value(key).toDouble();
            const double b = plans[i].toObject().value(key).toDouble();
            QVERIFY(a > 0 && b > 0);
            QVERIFY2(ascending ? a <= b : a >= b, qPrintable(QString("%1 then %2").arg(a).arg(b)));
            QCOMPARE(plans[i].toObject().value("rank").toInt(), i + 1);
        }
    }

    void textTable()
    {
        const Run r = run({"plan", data("example-moe.railyard.json"), "--top", "3"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.contains("configurations priced"));
        QVERIFY(r.out.contains("recompute"));
        QVERIFY(r.out.contains("\n  3 "));
        QVERIFY(!r.out.contains("\n  4 "));
        QVERIFY(r.out.contains("Assumptions"));
    }

    void usageErrorsExitTwo_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        const QString f = data("example-moe.railyard.json");
        QTest::newRow("no file") << QStringList{"plan"} << "plan needs a layout FILE";
        QTest::newRow("two files") << QStringList{"plan", f, f} << "plan takes one FILE";
        QTest::newRow("top zero") << QStringList{"plan", f, "--top", "0"}
                                  << "--top must be between 1";
        QTest::newRow("top word") << QStringList{"plan", f, "--top", "many"}
                                  << "--top needs a number";
        QTest::newRow("top fraction")
                << QStringList{"plan", f, "--top", "2.5"} << "--top needs a whole number";
        QTest::newRow("top missing") << QStringList{"plan", f, "--top"} << "--top needs a value";
        QTest::newRow("objective") << QStringList{"plan", f, "--objective", "fastest"}
                                   << "--objective takes step_time, cost or tokens_per_dollar";
        QTest::newRow("unknown option")
                << QStringList{"plan", f, "--fast"} << "unknown option --fast";
        QTest::newRow("tokens without buy")
                << QStringList{"plan", f, "--tokens", "1e12"} << "--tokens goes with --buy";
        QTest::newRow("buy without tokens")
                << QStringList{"plan", f, "--buy"} << "--buy needs --tokens and --deadline-days";
        QTest::newRow("buy with objective") << QStringList{"plan",
                                                           f,
                                                           "--buy",
                                                           "--tokens",
                                                           "1e9",
                                                           "--deadline-days",
                                                           "1",
                                                           "--objective",
                                                           "cost"}
                                            << "--objective does not go with --buy";
        QTest::newRow("negative deadline")
                << QStringList{"plan", f, "--buy", "--tokens", "1e9", "--deadline-days", "-1"}
                << "--deadline-days must be between";
    }
    void usageErrorsExitTwo()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const Run r = run(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QVERIFY(r.err.contains("railyard plan --help"));
        QVERIFY(r.out.isEmpty());
    }

    void helpExitsZero()
    {
        const Run r = run({"plan", "--help"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.contains("--objective"));
        QVERIFY(r.out.contains("--buy"));
    }

    void modelThatFitsNowhere()
    {
        const QString f = data("plan-no-fit.railyard.json");
        const Run r = run({"plan", f});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(f + ": nothing fits"), qPrintable(r.err));
        QVERIFY2(r.err.contains("llama3.1-405b does not fit in the 79.6 GiB"), qPrintable(r.err));
        QVERIFY(r.err.contains("8 H100-SXM GPUs"));
        QVERIFY(r.err.contains("the smallest needs"));
        // The JSON still comes, with no plans and the closest configuration.
        const Run j = run({"plan", f, "--json"});
        QCOMPARE(j.exitCode, 1);
        const QJsonObject o = json(j);
        QVERIFY(o.value("plans").toArray().isEmpty());
        QVERIFY(num(o, "evaluated") > 0);
        QCOMPARE(num(o, "fitting"), 0.0);
        const QJsonObject least = o.value("no_fit").toObject().value("least_memory").toObject();
        QVERIFY(num(least, "memory_gib_per_gpu") > 79.6);
        QCOMPARE(least.value("fits").toBool(), false);
    }

    void badFileExitsOne()
    {
        const Run r = run({"plan", data("bad/negative-tp.railyard.json")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY(r.err.contains("negative-tp.railyard.json"));
        const Run missing = run({"plan", data("no-such-file.railyard.json")});
        QCOMPARE(missing.exitCode, 1);
        QVERIFY(missing.err.contains("no-such-file.railyard.json"));
    }

    void buy()
    {
        // The small MoE model on a billion tokens in a day: the smallest priced cluster that
        // does it, with its cost from the catalog's price.
        const Run r = run({"plan",
                           data("example-moe.railyard.json"),
                           "--buy",
                           "--tokens",
                           "1e9",
                           "--deadline-days",
                           "1",
                           "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject o = json(r);
        const QJsonObject best = o.value("best").toObject();
        QVERIFY(QStringList({"H100-SXM", "H200-SXM", "GB200"})
                        .contains(best.value("gpu").toString()));
        QVERIFY(best.value("meets_deadline").toBool());
        QVERIFY(num(best, "days") <= 1);
        const double price = num(best, "price_per_gpu_hour");
        QVERIFY(price > 0);
        RAILYARD_COMPARE_NEAR(num(best, "cost"),
                              price * num(best, "gpus") * num(best, "days") * 24,
                              1e-6);
        // The cheapest of those that meet the deadline.
        for (const auto &v : o.value("considered").toArray()) {
            const QJsonObject c = v.toObject();
            if (c.value("fits").toBool() && c.value("meets_deadline").toBool())
                QVERIFY(num(c, "cost") >= num(best, "cost"));
        }
        QVERIFY(o.value("skipped_gpus").toArray().contains(QJsonValue("A100-SXM-80GB")));
        QVERIFY(!o.value("assumptions").toArray().isEmpty());
        // An impossible deadline: exit 1 and why.
        const Run late = run({"plan",
                              data("example-moe.railyard.json"),
                              "--buy",
                              "--tokens",
                              "1e15",
                              "--deadline-days",
                              "0.01",
                              "--max-gpus",
                              "64"});
        QCOMPARE(late.exitCode, 1);
        QVERIFY2(late.err.contains("no cluster of up to 64 GPUs"), qPrintable(late.err));
    }
};

QTEST_GUILESS_MAIN(TestPlanCli)
#include "tst_plancli.moc"
