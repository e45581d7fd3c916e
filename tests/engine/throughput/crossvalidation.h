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
// The constants refit here are the ones resources/catalog.json says were fitted to training
// rows: each GPU's sustained GEMM efficiency in BF16 and in FP8. Every other constant of the
// engine comes from a measurement of its own part (kernel tables, nccl-tests, framework reports,
// a stack's documentation) and is not refit. Holding one source family out (the run id's first
// letter: one paper, one vendor table, one benchmark round), the efficiencies are refit on the
// others and the held family is priced with them: its errors are out of sample.
namespace railyard::test {

// One refit constant: the GEMM efficiency of one GPU in one precision.
struct FitKey
{
    std::string gpu;
    bool fp8 = false;
    bool operator==(const FitKey &) const = default;
    QString name() const; // "H100-SXM fp8"
};
FitKey fitKey(const Run &r);

// Each run's tokens/s/GPU with its key's efficiency set to each point of a grid (every other
// constant as built in), so that refits cost no evaluation; between grid points, linear.
class EfficiencyCurves
{
public:
    static constexpr double kLow = 0.40;
    static constexpr double kStep = 0.02;
    static constexpr int kPoints = 29; // 0.40 .. 0.96

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
    QList<double> error;  // per run: out-of-sample (model - measured) / measured; NaN if not in
    QList<double> refit;  // per run: the efficiency its prediction used
    QList<bool> fromRest; // per run: false when no other family has its key (built-in value)
    // Per held family, per key: the refit efficiency.
    QMap<QChar, QMap<QString, double>> refits;
};

// Holds each family out in turn (among the runs for which `in(i)` holds), refits every key on
// the others and prices the held family with them.
CrossValidation leaveOneSourceOut(const QList<Run> &runs,
                                  const EfficiencyCurves &curves,
                                  const std::function<bool(int)> &in);

// The catalog's value of `key`.
double builtInEfficiency(const FitKey &key);

} // namespace railyard::test
