#pragma once

#include <string>
#include <vector>

namespace railyard::engine {

// How far the engine's step time has been from published measurements, by regime: the
// out-of-sample residuals of every run in the validation set (tests/data/throughput/runs.txt), kept in
// resources/fidelity.json. Regenerate that file after any change to the model:
//   RAILYARD_WRITE_RESIDUALS=resources/fidelity.json build/tests/engine/tst_throughput
struct ValidationRun
{
    std::string id;
    std::string architecture; // "ampere", "hopper", "blackwell"
    std::string precision;    // "bf16", "fp8"
    int gpus = 0;
    bool moe = false;
    bool zero3 = false; // ZeRO-3 or FSDP
    bool contextParallel = false;
    bool heldOut = false;
    // (model - measured) / measured, tokens per second per GPU, out of sample: priced with any
    // constant fitted to training runs refit without the run's source family
    // (leave-one-source-out; since issue 19 no constant is, so it equals fittedError). The band
    // is taken from these.
    double error = 0;
    double fittedError = 0; // the same with the constants as built in (in sample)
    // The training.stack it was priced with ("" for the engine's generic stack).
    std::string stack = {};
};

// What an evaluation is: the regime its band is taken from.
struct Regime
{
    std::string architecture;
    std::string precision;
    int gpus = 0;
    bool moe = false;
    bool zero3 = false;
    bool contextParallel = false;
    std::string stack = {}; // training.stack; "" when none is named
};

struct UncertaintyBand
{
    double fraction = 0; // half-width, as a fraction of the step time
    int runs = 0;        // validation runs it rests on
    std::string basis;   // in words: which runs, and what was widened ("80% conformal band ...")
};

// The built-in validation residuals.
const std::vector<ValidationRun> &validationRuns();
// Parses a residual file (resources/fidelity.json's format); throws InputError.
std::vector<ValidationRun> parseValidationRuns(const std::string &text, const std::string &file);

// The band for `regime`: the 80% split-conformal quantile (the ceil((n + 1) 0.8)-th smallest)
// of the out-of-sample |error| over the validation runs of the most specific matching group that
// holds at least five runs (architecture, precision and features, then scale; then architecture
// and precision; then architecture; then all runs), times 1.2 (a configuration no source
// measured: the factor that makes the band hold 80% of the runs of families it never saw),
// never narrower than 1.2 x the largest |error| of the one to four runs of the most specific group
// that holds any (the conformal quantile of so few runs), and widened by half where no run shares
// the regime's architecture or features. A named stack's own runs of the same architecture,
// precision and features widen it the same way (never narrow it): 1.2 x their conformal quantile.
UncertaintyBand uncertaintyBand(const Regime &regime,
                                const std::vector<ValidationRun> &runs = validationRuns());

} // namespace railyard::engine
