#pragma once

// What the kernel tests share (tst_kernels, tst_attentionkernels, tst_elementwisekernels): the
// rows of tests/data/kernels/*.csv and the engine's rate for each, and the per-group report.

#include "layout/catalog.h"
#include "step/compute.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <map>
#include <vector>

namespace railyard::kerneltest {

using engine::ComputeModel;
using engine::GpuSpec;

// The data rows of a CSV under tests/data/kernels (comments and the header skipped); a row with
// another number of columns fails the test that reads it.
QList<QStringList> readCsv(const QString &name, int columns);
double median(std::vector<double> v);
const GpuSpec &gpuOf(const QString &id);
// Prints the median |error| and the signed range of each group and checks it against `bound`
// (every group must have one).
void checkGroups(const std::map<QString, std::vector<double>> &errors,
                 const std::map<QString, double> &bound);

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

std::vector<GemmRow> readGemm();
// The engine's TFLOP/s for the GEMM kernel of `r` on `gpu` (FP8 and MXFP8 on the FP8 tensor
// cores), at the benchmark's clock or, `sustained`, at the GPU's sustained training clock.
double gemmTflops(const GpuSpec &gpu, const GemmRow &r, bool sustained);

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

std::vector<AttentionRow> readAttention();
ComputeModel attentionModel(const GpuSpec &gpu, const QString &kernel);
// The engine's TFLOP/s for the row's pass (fwd, bwd, or both).
double predictedTflops(const AttentionRow &r);

} // namespace railyard::kerneltest
