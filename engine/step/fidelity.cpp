#include "step/fidelity.h"

#include "base/jsoncursor.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace railyard::engine {

extern const char *const kValidationResidualsJson; // generated from resources/fidelity.json

namespace {

constexpr std::size_t kMinRuns = 5;
constexpr double kQuantile = 0.8;
constexpr double kFloor = 0.05; // never claim better than 5%
constexpr double kWiden = 1.5;  // no run of the regime's kind: half as wide again
// A configuration no source measured sits further out than the residuals of the sources that
// did, which cluster by source: the plain conformal band, taken from the other families only,
// held 59 of the 80 published runs (74%) out of sample; 1.15 is the least factor that reaches
// 80% (64 runs), 1.2 is taken for a margin (67 runs, 84%), as tst_throughput's bandCoverage
// checks. One factor calibrated on that coverage, for all regimes.
constexpr double kUnseenSource = 1.2;

int scaleBucket(int gpus)
{
    return gpus <= 256 ? 0 : gpus <= 2048 ? 1 : 2;
}

const char *scaleWords(int gpus)
{
    return gpus <= 256 ? "up to 256 GPUs" : gpus <= 2048 ? "257 to 2,048 GPUs" : "over 2,048 GPUs";
}

// The split-conformal quantile of n residuals: the ceil((n + 1) q)-th smallest (the largest
// when that passes n). A band of that half-width holds a new run drawn like these at least a
// fraction q of the time, where the plain q-quantile of n runs holds it less often when n is
// small.
double conformalQuantile(std::vector<double> v, double q)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const std::size_t k = static_cast<std::size_t>(std::ceil(double(v.size() + 1) * q));
    return v[std::min(v.size(), std::max<std::size_t>(k, 1)) - 1];
}

std::string archWords(const std::string &a)
{
    return a == "ampere"      ? "Ampere (A100)"
           : a == "hopper"    ? "Hopper (H100, H200)"
           : a == "blackwell" ? "Blackwell"
                              : a;
}

} // namespace

std::vector<ValidationRun> parseValidationRuns(const std::string &text, const std::string &file)
{
    const Json doc = parseJsonText(text, file);
    const JsonCursor root(doc, file);
    root.requireObject();
    const JsonCursor list = root.at("runs");
    list.requireArray();
    std::vector<ValidationRun> runs;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const JsonCursor c = list.at(i);
        c.requireObject();
        ValidationRun r;
        r.id = c.at("id").toString();
        r.architecture = c.at("architecture").toString();
        r.precision = c.at("precision").toString();
        r.gpus = c.intOr("gpus", 1, 1, 1 << 30);
        r.moe = c.boolOr("moe", false);
        r.zero3 = c.boolOr("zero3", false);
        r.contextParallel = c.boolOr("context_parallel", false);
        r.stack = c.stringOr("stack", "");
        r.heldOut = c.boolOr("held_out", false);
        r.error = c.at("error").toDouble(-10, 10);
        r.fittedError = c.doubleOr("fitted_error", r.error, -10, 10);
        runs.push_back(std::move(r));
    }
    return runs;
}

const std::vector<ValidationRun> &validationRuns()
{
    static const std::vector<ValidationRun> runs = parseValidationRuns(kValidationResidualsJson,
                                                                       "fidelity.json (built in)");
    return runs;
}

UncertaintyBand uncertaintyBand(const Regime &g, const std::vector<ValidationRun> &runs)
{
    UncertaintyBand band;
    const auto sameFeatures = [&](const ValidationRun &r) {
        return r.moe == g.moe && r.zero3 == g.zero3 && r.contextParallel == g.contextParallel;
    };
    const auto sameKind = [&](const ValidationRun &r) {
        return r.architecture == g.architecture && r.precision == g.precision;
    };
    std::string features;
    if (g.moe)
        features += ", MoE";
    if (g.zero3)
        features += ", ZeRO-3/FSDP";
    if (g.contextParallel)
        features += ", context parallel";
    const std::string kind = archWords(g.architecture) + " " + g.precision;
    struct Level
    {
        std::function<bool(const ValidationRun &)> match;
        std::string words;
    };
    const Level levels[] = {
            {[&](const ValidationRun &r) {
                 return sameKind(r) && sameFeatures(r)
                        && scaleBucket(r.gpus) == scaleBucket(g.gpus);
             },
             kind + features + ", " + scaleWords(g.gpus)},
            {[&](const ValidationRun &r) { return sameKind(r) && sameFeatures(r); },
             kind + features},
            // MoE or dense moves the error more than anything else that sets a group apart: on
            // Blackwell, MoE runs are priced up to 3.4x fast where dense ones are within a third
            // (family W). A group of the GPU and precision keeps to one of the two.
            {[&](const ValidationRun &r) { return sameKind(r) && r.moe == g.moe; },
             kind + (g.moe ? ", MoE" : ", dense")},
            {[&](const ValidationRun &r) {
                 return r.architecture == g.architecture && r.moe == g.moe;
             },
             archWords(g.architecture) + (g.moe ? ", MoE" : ", dense")},
            {[&](const ValidationRun &r) { return sameKind(r); }, kind},
            {[&](const ValidationRun &r) { return r.architecture == g.architecture; },
             archWords(g.architecture)},
            {[&](const ValidationRun &) { return true; }, "all GPUs and precisions"},
    };
    // The few runs most like the configuration, when too few to take a band from alone.
    std::vector<double> closest;
    std::string closestWords;
    for (const Level &level : levels) {
        std::vector<double> errors;
        for (const ValidationRun &r : runs)
            if (level.match(r))
                errors.push_back(std::abs(r.error));
        if (errors.size() < kMinRuns) {
            if (closest.empty() && !errors.empty()) {
                closest = errors;
                closestWords = level.words;
            }
            continue;
        }
        band.fraction = std::max(kFloor, kUnseenSource * conformalQuantile(errors, kQuantile));
        band.runs = static_cast<int>(errors.size());
        band.basis = "80% conformal band of the out-of-sample |error| over the "
                     + std::to_string(errors.size()) + " published runs like this one ("
                     + level.words
                     + "), widened by a fifth for a configuration no source "
                       "measured";
        break;
    }
    // Under five runs the conformal quantile is their largest |error|: the band is never
    // narrower than what the runs most like the configuration missed by, however the broader
    // group did.
    if (!closest.empty()) {
        const double few = kUnseenSource * conformalQuantile(closest, kQuantile);
        if (few > band.fraction) {
            band.fraction = few;
            const std::size_t n = closest.size();
            band.basis += ", widened to the "
                          + (n == 1 ? std::string("one published run")
                                    : std::to_string(n) + " published runs")
                          + " most like it (" + closestWords + "), off by up to "
                          + std::to_string(static_cast<int>(std::lround(
                                  100 * *std::max_element(closest.begin(), closest.end()))))
                          + "%";
        }
    }
    // The runs priced with the configuration's own stack, on its GPU, precision and features: a
    // stack's mechanisms move the error as much as the regime does (Megatron-DeepSpeed's runs
    // are 11-13% fast where Megatron-LM's of the same shape are within 4%), so the band is
    // never narrower than what they missed by.
    if (!g.stack.empty()) {
        std::vector<double> own;
        for (const ValidationRun &r : runs)
            if (r.stack == g.stack && sameKind(r) && sameFeatures(r))
                own.push_back(std::abs(r.error));
        const double ownBand = kUnseenSource * conformalQuantile(own, kQuantile);
        if (!own.empty() && ownBand > band.fraction) {
            band.fraction = ownBand;
            band.basis += ", widened to the " + std::to_string(own.size()) + " published run"
                          + (own.size() == 1 ? "" : "s") + " priced with " + g.stack + " (" + kind
                          + features + ")";
        }
    }
    // Nothing measured of this architecture, or with these features: say so and widen.
    const bool archSeen = std::any_of(runs.begin(), runs.end(), [&](const ValidationRun &r) {
        return r.architecture == g.architecture;
    });
    const bool featuresSeen = std::any_of(runs.begin(), runs.end(), [&](const ValidationRun &r) {
        return sameFeatures(r) && r.architecture == g.architecture;
    });
    if (!archSeen || !featuresSeen) {
        band.fraction *= kWiden;
        const std::string which = !archSeen          ? "on " + archWords(g.architecture)
                                  : features.empty() ? "on " + archWords(g.architecture)
                                                               + " without MoE, ZeRO-3/FSDP or "
                                                                 "context parallelism"
                                                     : "on " + archWords(g.architecture) + " with"
                                                               + features.substr(1);
        band.basis += ", widened by half: no published run " + which + " to check against";
    }
    return band;
}

} // namespace railyard::engine
