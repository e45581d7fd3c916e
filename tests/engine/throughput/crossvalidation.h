#pragma once

#include "publishedruns.h"

#include <QList>
#include <QMap>
#include <QString>

#include <array>
#include <functional>
#include <string>
#include <vector>

// Leave-one-source-out cross-validation of the engine against the published runs.
//
// Only a constant fitted to training rows is refit: holding one source family out (the run id's
// first letter: one paper, one vendor table, one benchmark round), it is refit on the others and
// the held family is priced with it, so its errors are out of sample. Since issue 19 no constant
// is: each GPU's GEMM efficiency in BF16 and FP8 (the last ones that were) comes from the kernel
// tables of tests/data/kernels (tst_kernels::catalogFromKernels), and every other constant from
// a measurement of its own part (kernel tables, nccl-tests, framework reports, a stack's
// documentation). So every run is out of sample as priced: trainingFitted() is false for every
// key and leaveOneSourceOut keeps each run's own error. The refit stays as a diagnostic: what the
// training runs alone would set each GEMM efficiency to, beside the kernel tables' value.
namespace railyard::test {

// One GEMM efficiency: of one GPU in one precision.
struct FitKey
{
    std::string gpu;
    bool fp8 = false;
    bool operator==(const FitKey &) const = default;
    QString name() const; // "H100-SXM fp8"
};
FitKey fitKey(const Run &r);
// Whether training rows set `key` (none do: see above).
bool trainingFitted(const FitKey &key);

// Each run's tokens/s/GPU with its key's efficiency set to each point of a grid (every other
// constant as built in), so that refits cost no evaluation; between grid points, linear.
class EfficiencyCurves
{
public:
    static constexpr double kLow = 0.40;
    static constexpr double kStep = 0.03;
    static constexpr int kPoints = 27; // 0.40 .. 1.18 (the catalog's values are at the benchmark
                                       // clock; training runs at the sustained one)

    // Prices every run for which `in(i)` holds at every grid point.
    EfficiencyCurves(const QList<Run> &runs, const std::function<bool(int)> &in);
    // Tokens/s/GPU of run `i` at `efficiency` (clamped to the grid).
    double tokens(int i, double efficiency) const;
    bool has(int i) const { return !m_tokens[i].empty(); }

private:
    std::vector<std::vector<double>> m_tokens;
};

// The efficiency of `key` that fits best the runs of that key for which `use(i)` holds: the
// least summed |log(model / measured)|, searched in steps of 0.001; NaN when no run is used.
double fitEfficiency(const QList<Run> &runs,
                     const EfficiencyCurves &curves,
                     const FitKey &key,
                     const std::function<bool(int)> &use);

struct CrossValidation
{
    QList<double> error; // per run: out-of-sample (model - measured) / measured; NaN if not in
    QList<double> refit; // per run: the efficiency its prediction used
    // Per held family, per key: the efficiency refit without it, and what the held family's
    // runs alone would fit (the diagnostic; not used to price).
    QMap<QChar, QMap<QString, double>> refits;
};

// Holds each family out in turn (among the runs for which `in(i)` holds): a run whose key is
// trainingFitted() is priced with the key refit on the other families; any other run keeps its
// error as priced, `direct[i]` (its efficiency is not set by any training row).
CrossValidation leaveOneSourceOut(const QList<Run> &runs,
                                  const EfficiencyCurves &curves,
                                  const std::function<bool(int)> &in,
                                  const QList<double> &direct);

// The catalog's value of `key`.
double builtInEfficiency(const FitKey &key);

} // namespace railyard::test
