// libFuzzer target for the catalog parser (a user's catalog is a stranger's file): the bytes are
// parsed as a catalog; a failure must be an InputError naming the file; what parses must have
// every rate positive and finite (the engine divides by them) and merge into the built-in
// catalog. Anything else escaping, a sanitizer report or a timeout is a finding. Built only
// with -DRAILYARD_BUILD_FUZZERS=ON and clang: scripts/fuzz.sh [SECONDS] fuzz_catalog.
#include "base/inputerror.h"
#include "layout/catalog.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace railyard::engine;

namespace {

[[noreturn]] void finding(const char *what, const std::string &detail)
{
    std::fprintf(stderr, "fuzz_catalog: %s: %s\n", what, detail.substr(0, 2000).c_str());
    std::abort();
}

bool positive(double v)
{
    return std::isfinite(v) && v > 0;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char *>(data), size);
    Catalog catalog;
    try {
        catalog = Catalog::fromJsonText(text, "fuzz.json");
    } catch (const InputError &e) {
        if (std::string(e.what()).rfind("fuzz.json", 0) != 0)
            finding("an error that does not name the file", e.what());
        return 0;
    }
    for (const GpuSpec &g : catalog.gpus())
        if (!positive(g.bf16Tflops) || !positive(g.hbmGB) || !positive(g.hbmTBPerS)
            || !positive(g.nvlink.gbPerS) || g.nvlink.links <= 0)
            finding("a GPU with a rate that is not positive", g.id);
    for (const NicModel &n : catalog.nics())
        if (!positive(n.gbitPerS) || !positive(n.efficiency))
            finding("a NIC with a rate that is not positive", n.id);
    for (const PcieSpec &p : catalog.pcieGenerations())
        if (!positive(p.gbPerS))
            finding("a PCIe generation with a rate that is not positive",
                    std::to_string(p.generation));
    for (const SwitchModel &s : catalog.switches())
        if (!positive(s.portGbitPerS))
            finding("a switch with a rate that is not positive", s.id);
    Catalog merged = Catalog::compiledIn();
    merged.merge(catalog);
    return 0;
}
