// Issue 19, point 1 (compute): the engine's ComputeModel against published kernel benchmarks, on
// its own, before anything is composed. Each row of tests/data/kernels/*.csv keeps its source;
// this test prints, per row, the engine's predicted throughput, the measured one and the signed
// error, and the median |error| per GPU and kernel. The bounds are today's medians plus a stated
// margin, so a regression fails. The catalog's efficiencies are the ones these rows give
// (catalogFromKernels), not fits to training runs.
// This file: dense GEMMs and the clocks they run at; attention: tst_attentionkernels; memory-
// bound kernels and the layer's element-wise work: tst_elementwisekernels.
#include "layout/catalog.h"
#include "layout/softwarestack.h"
#include "layout/transformer.h"
#include "step/compute.h"
#include "step/stepcost.h"

#include "comparenear.h"
#include "kernels/kernelrows.h"
#include "throughput/publishedruns.h"

#include <QFile>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

using namespace railyard::engine;

using namespace railyard::engine;
using namespace railyard::kerneltest;

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
};

QTEST_APPLESS_MAIN(TestKernels)
#include "tst_kernels.moc"
