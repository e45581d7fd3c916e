// libFuzzer targets for the importers, one executable per filter (FUZZ_IMPORTER selects it:
// 1 nvidia-smi topo -m, 2 NCCL topology/graph XML, 3 nccl-tests logs). The bytes go through the
// text checks and the filter; a failure must be an InputError naming the file; what imports must
// give a layout that saves, loads again to the same content and builds its topology. Anything
// else escaping, a sanitizer report or a timeout is a finding. Built only with
// -DRAILYARD_BUILD_FUZZERS=ON and clang: scripts/fuzz.sh [SECONDS] fuzz_import_topo.
#include "base/inputerror.h"
#include "base/xmlreader.h"
#include "import/importer.h"
#include "import/importtext.h"
#include "import/nccltestsfilter.h"
#include "import/nccltopofilter.h"
#include "import/topomatrixfilter.h"
#include "layout/catalog.h"
#include "layout/layout.h"
#include "topology/topology.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace railyard::engine;

namespace {

[[noreturn]] void finding(const char *what, const std::string &detail)
{
    std::fprintf(stderr, "fuzz_import: %s: %s\n", what, detail.substr(0, 2000).c_str());
    std::abort();
}

ImportedMachine readWith(const std::string &text, const std::string &file)
{
    checkImportText(text, file);
#if FUZZ_IMPORTER == 1
    return TopoMatrixFilter::read(splitImportLines(text, file), file);
#elif FUZZ_IMPORTER == 2
    const XmlElement root = parseXml(text, file);
    return root.name == "graphs" ? NcclGraphFilter::read(root, file)
                                 : NcclTopoFilter::read(root, file);
#else
    return NcclTestsFilter::read(splitImportLines(text, file), file);
#endif
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char *>(data), size);
    ImportedMachine machine;
    try {
        machine = readWith(text, "fuzz.txt");
    } catch (const InputError &e) {
        if (std::string(e.what()).rfind("fuzz.txt", 0) != 0)
            finding("an error that does not name the file", e.what());
        return 0;
    }
    // The nearest layout of a big import is slow to calibrate; the filters are what is fuzzed.
    if (machine.gpus.size() > 256 || machine.measurements.size() > 64)
        return 0;
    Layout layout;
    try {
        layout = layoutFromImport(machine, Catalog::builtin());
    } catch (const InputError &e) {
        if (std::string(e.what()).rfind("fuzz.txt", 0) != 0)
            finding("a layout error that does not name the file", e.what());
        return 0;
    }
    const std::string saved = layoutToText(layout);
    try {
        const Layout again = parseLayout(saved, "saved.json", &Catalog::builtin());
        if (!again.sameContent(layout))
            finding("saved and read again, the imported layout differs", saved);
        buildTopology(again.cluster, Catalog::builtin());
    } catch (const InputError &e) {
        finding("an imported layout does not load or build", e.what());
    }
    return 0;
}
