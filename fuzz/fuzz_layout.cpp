// libFuzzer target: the bytes as a layout document. What loads must also save and load again to
// the same content (Document::checkLayout relies on it), build its topology and evaluate without
// throwing. A load that fails must fail with an InputError; anything else escaping (an nlohmann
// exception, std::out_of_range, ...) is a finding, as are sanitizer reports and timeouts.
// Built only with -DRAILYARD_BUILD_FUZZERS=ON and clang: scripts/fuzz.sh.
#include "base/inputerror.h"
#include "layout/layout.h"
#include "step/evaluate.h"
#include "topology/topology.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace railyard::engine;

namespace {

// Evaluating is linear in the GPUs; above this many a run would take too long to fuzz well.
constexpr int kMaxFuzzGpus = 1024;

[[noreturn]] void finding(const char *what, const std::string &detail)
{
    std::fprintf(stderr, "fuzz_layout: %s: %s\n", what, detail.c_str());
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char *>(data), size);
    Layout layout;
    try {
        layout = parseLayout(text, "fuzz.json");
    } catch (const InputError &e) {
        if (std::string(e.what()).rfind("fuzz.json: ", 0) != 0)
            finding("an error that does not name the file", e.what());
        return 0;
    }

    const std::string saved = layoutToText(layout);
    try {
        const Layout again = parseLayout(saved, "saved.json");
        if (!again.sameContent(layout))
            finding("saved and read again, the layout differs", saved);
    } catch (const InputError &e) {
        finding("a loaded layout saves to a file that does not load", e.what());
    }

    if (layout.cluster.gpuCount() > kMaxFuzzGpus)
        return 0;
    try {
        const Topology topology = buildTopology(layout.cluster, Catalog::builtin());
        EvaluateOptions options;
        options.linkLoads = true;
        options.timeline = true;
        const Evaluation e = evaluate(layout, topology, options);
        (void)e;
    } catch (const InputError &e) {
        // The loader accepted it, so the message would lack the file and place.
        finding("a loaded layout fails to build or price", e.what());
    }
    return 0;
}
