#pragma once

// How sure a serving latency is, until serving runs are validated end to end: each part of a
// decode step or a prefill carries the largest |error| measured for that part against published
// part-level measurements (tests/engine/tst_servingparts.cpp checks that the model stays within
// these on its data), and the band is the parts' errors weighted by their share of the time.
// Parts no measurement covers yet are named in the basis and left out of the band.

#include "serving/servingevaluate.h"

#include <string>
#include <vector>

namespace railyard::engine {

// The band on a serving deployment's rates (output tokens/s per GPU, input tokens/s per GPU,
// tokens/s per user, hence TPOT): the measured rate lies within the modelled one divided or
// multiplied by 1 + kServingRunsBand for kServingRunsBandCoverage of the published runs of the
// fitted families (tests/data/serving/runs.txt T, P, S; tst_servingruns derives it and checks
// it leave-one-family-out and on the held-out families L, G, V, D).
inline constexpr double kServingRunsBandCoverage = 0.8;
inline constexpr double kServingRunsBand = 0.400;

enum class ServingPart {
    Compute,
    WeightsRead,
    PrefillAttention,
    DecodeAttention,
    Tp,              // TP all-reduces inside one NVLink domain
    TpAcrossDomains, // ... across domains
    Ep,
    Pp,
    KvTransfer,
    Overhead
};

struct PartError
{
    ServingPart part = ServingPart::Compute;
    const char *name = "";
    double error = 0; // largest |model - measured| / measured; < 0: not validated
    int points = 0;   // measurements it rests on
    const char *source = "";
};

// The table, one entry per part.
const std::vector<PartError> &servingPartErrors();
const PartError &servingPartError(ServingPart part);

// The band of a latency made of `decode` (decode-step parts, weighted by `decodeShare` of the
// latency) and `prefill` (weighted by `prefillShare`): the half-width as a fraction of the
// latency, and its basis in words. `tpAcross`: the TP all-reduces leave an NVLink domain.
struct ServingBandResult
{
    double fraction = 0;
    std::string basis;
};
ServingBandResult servingBand(const ServingBreakdown &decode,
                              double decodeShare,
                              const ServingBreakdown &prefill,
                              double prefillShare,
                              bool tpAcross);

} // namespace railyard::engine
