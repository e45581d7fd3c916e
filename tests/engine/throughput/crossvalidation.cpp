#include "crossvalidation.h"

#include "topology/topology.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace railyard::test {

QString FitKey::name() const
{
    return QString::fromStdString(gpu) + (fp8 ? QStringLiteral(" fp8") : QStringLiteral(" bf16"));
}

FitKey fitKey(const Run &r)
{
    return {gpuFor(r), r.precision == QLatin1String("fp8")};
}

bool trainingFitted(const FitKey &)
{
    return false;
}

double builtInEfficiency(const FitKey &key)
{
    const GpuSpec *g = Catalog::builtin().gpu(key.gpu);
    if (!g)
        qFatal("no GPU %s in the catalog", key.gpu.c_str());
    return key.fp8 ? g->gemmEfficiencyFp8 : g->gemmEfficiencyBf16;
}

EfficiencyCurves::EfficiencyCurves(const QList<Run> &runs, const std::function<bool(int)> &in)
    : m_tokens(runs.size())
{
    for (int i = 0; i < runs.size(); ++i) {
        if (!in(i))
            continue;
        const FitKey key = fitKey(runs[i]);
        Catalog catalog = Catalog::builtin();
        GpuSpec gpu = *catalog.gpu(key.gpu);
        m_tokens[i].resize(kPoints);
        for (int k = 0; k < kPoints; ++k) {
            (key.fp8 ? gpu.gemmEfficiencyFp8 : gpu.gemmEfficiencyBf16) = kLow + k * kStep;
            catalog.setGpu(gpu);
            m_tokens[i][k] = price(runs[i], catalog).e.tokensPerSPerGpu;
        }
    }
}

double EfficiencyCurves::tokens(int i, double efficiency) const
{
    const std::vector<double> &t = m_tokens[i];
    const double at = std::clamp((efficiency - kLow) / kStep, 0.0, double(kPoints - 1));
    const int k = std::min(kPoints - 2, int(std::floor(at)));
    return t[k] + (t[k + 1] - t[k]) * (at - k);
}

double fitEfficiency(const QList<Run> &runs,
                     const EfficiencyCurves &curves,
                     const FitKey &key,
                     const std::function<bool(int)> &use)
{
    std::vector<int> used;
    for (int i = 0; i < runs.size(); ++i)
        if (curves.has(i) && use(i) && fitKey(runs[i]) == key)
            used.push_back(i);
    if (used.empty())
        return std::numeric_limits<double>::quiet_NaN();
    double best = std::numeric_limits<double>::infinity(), bestEff = 0;
    const double high = EfficiencyCurves::kLow
                        + (EfficiencyCurves::kPoints - 1) * EfficiencyCurves::kStep;
    for (double eff = EfficiencyCurves::kLow; eff <= high + 1e-9; eff += 0.001) {
        double loss = 0;
        for (int i : used)
            loss += std::abs(std::log(curves.tokens(i, eff) / runs[i].measuredTokens));
        if (loss < best) {
            best = loss;
            bestEff = eff;
        }
    }
    return bestEff;
}

CrossValidation leaveOneSourceOut(const QList<Run> &runs,
                                  const EfficiencyCurves &curves,
                                  const std::function<bool(int)> &in,
                                  const QList<double> &direct)
{
    CrossValidation cv;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (int i = 0; i < runs.size(); ++i) {
        cv.error << nan;
        cv.refit << nan;
    }
    QList<QChar> families;
    for (int i = 0; i < runs.size(); ++i)
        if (in(i) && !families.contains(runs[i].family))
            families << runs[i].family;
    for (const QChar held : families) {
        const auto rest = [&](int j) { return in(j) && runs[j].family != held; };
        for (int i = 0; i < runs.size(); ++i) {
            if (!in(i) || runs[i].family != held)
                continue;
            const FitKey key = fitKey(runs[i]);
            const double refit = fitEfficiency(runs, curves, key, rest);
            cv.refits[held][key.name()] = refit;
            if (!trainingFitted(key) || std::isnan(refit)) {
                cv.refit[i] = builtInEfficiency(key);
                cv.error[i] = direct[i];
                continue;
            }
            cv.refit[i] = refit;
            cv.error[i] = (curves.tokens(i, refit) - runs[i].measuredTokens)
                          / runs[i].measuredTokens;
        }
    }
    return cv;
}

} // namespace railyard::test
