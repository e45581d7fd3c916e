#include "serving/servingband.h"

#include "base/units.h"

#include <algorithm>

namespace railyard::engine {

const std::vector<PartError> &servingPartErrors()
{
    static const std::vector<PartError> table = {
            // 0.21 until each serving kernel paid a small kernel's time in a CUDA graph
            // (catalog graph_kernel_us); the smaller benchmark GEMMs then come out slower.
            {ServingPart::Compute,
             "compute-bound GEMMs",
             0.26,
             19,
             "BF16 and FP8 GEMM benchmarks on A100, H100, H200, B200 and GB200 at the "
             "benchmarks' clock, as inference runs them (tests/data/kernels/gemm.csv)"},
            {ServingPart::WeightsRead,
             "weights read from HBM",
             0.05,
             2,
             "H100 weight loads in a 70B TP8 decode, 2.6 and 2.8 TB/s "
             "(tests/data/serving-parts/hbm.csv)"},
            {ServingPart::PrefillAttention,
             "prefill attention",
             0.20,
             72,
             "FlashAttention-2/3 and cuDNN forward on A100, H100, H200, GB200 and GB300, each "
             "row's own kernel (tests/data/kernels/attention.csv)"},
            {ServingPart::DecodeAttention,
             "decode attention (KV cache reads)",
             0.48,
             1,
             "paged KV-cache reads on H100 at 1.4 TB/s (tests/data/serving-parts/hbm.csv)"},
            {ServingPart::Tp,
             "TP all-reduce inside an NVLink domain",
             0.33,
             37,
             "NCCL and one-/two-shot all-reduce of 1 KB-4 MiB on H100, with and without CUDA "
             "graphs (tests/data/serving-parts/allreduce.csv)"},
            {ServingPart::TpAcrossDomains,
             "TP all-reduce across NVLink domains",
             0.77,
             1,
             "an 8-byte NVLSTree all-reduce over two Hopper servers "
             "(tests/data/serving-parts/allreduce.csv, N1)"},
            {ServingPart::Ep,
             "MoE dispatch and combine",
             0.15,
             10,
             "DeepEP's low-latency kernels at EP 16-256 on H800 "
             "(tests/data/serving-parts/deepep.csv)"},
            {ServingPart::Pp, "pipeline sends", -1, 0, ""},
            {ServingPart::KvTransfer, "KV-cache transfer", -1, 0, ""},
            {ServingPart::Overhead, "launch and scheduling", -1, 0, ""},
    };
    return table;
}

const PartError &servingPartError(ServingPart part)
{
    for (const PartError &e : servingPartErrors())
        if (e.part == part)
            return e;
    return servingPartErrors().front();
}

ServingBandResult servingBand(const ServingBreakdown &decode,
                              double decodeShare,
                              const ServingBreakdown &prefill,
                              double prefillShare,
                              bool tpAcross)
{
    struct Piece
    {
        ServingPart part;
        double seconds; // weighted
    };
    const ServingPart tp = tpAcross ? ServingPart::TpAcrossDomains : ServingPart::Tp;
    const auto pieces = [tp](const ServingBreakdown &b, bool isDecode, double w) {
        return std::vector<Piece>{
                {ServingPart::Compute, b.compute * w},
                {ServingPart::WeightsRead, b.weightsRead * w},
                {isDecode ? ServingPart::DecodeAttention : ServingPart::PrefillAttention,
                 b.attention * w},
                {tp, b.tp * w},
                {ServingPart::Ep, b.ep * w},
                {ServingPart::Pp, b.pp * w},
                {ServingPart::KvTransfer, b.kvTransfer * w},
                {ServingPart::Overhead, b.overhead * w},
        };
    };
    std::vector<Piece> all = pieces(decode, true, decodeShare);
    for (const Piece &p : pieces(prefill, false, prefillShare))
        all.push_back(p);
    double total = 0;
    for (const Piece &p : all)
        total += p.seconds;
    ServingBandResult r;
    if (total <= 0)
        return r;
    std::vector<double> share(servingPartErrors().size(), 0.0);
    for (const Piece &p : all)
        for (std::size_t i = 0; i < servingPartErrors().size(); ++i)
            if (servingPartErrors()[i].part == p.part)
                share[i] += p.seconds / total;
    std::string covered, missing;
    for (std::size_t i = 0; i < share.size(); ++i) {
        const PartError &e = servingPartErrors()[i];
        if (share[i] < 0.005)
            continue;
        const std::string what = std::string(e.name) + " " + formatNumber(100 * share[i], 2)
                                 + "% of the time";
        if (e.error >= 0) {
            r.fraction += share[i] * e.error;
            covered += (covered.empty() ? "" : "; ") + what + " x " + formatNumber(100 * e.error, 2)
                       + "% (" + std::to_string(e.points) + " measurements)";
        } else {
            missing += (missing.empty() ? "" : ", ") + what;
        }
    }
    r.basis = "no end-to-end serving validation yet: the parts' largest measured errors weighted "
              "by their share of the time ("
              + covered + ")";
    if (!missing.empty())
        r.basis += "; not validated and not in the band: " + missing;
    return r;
}

} // namespace railyard::engine
