#pragma once

#include "import/importedmachine.h"
#include "layout/catalog.h"
#include "layout/layout.h"

#include <optional>
#include <string>

namespace railyard::engine {

// Reads any supported file (the format is found from the content): nvidia-smi topo -m, NCCL
// topology XML, NCCL graph XML, nccl-tests logs. `file` names it in errors. Throws InputError
// naming the file and the line for anything it cannot read.
ImportedMachine importText(const std::string &text, const std::string &file);
// readImportText, then importText.
ImportedMachine importFile(const std::string &path);

struct ImportOptions
{
    std::string gpu; // catalog id to use; empty: inferred from the file (and its name)
};

// The nearest generated layout for what was imported: servers x GPUs, NICs per GPU, the NVLink
// domain and the GPU from the catalog. What the generated shape cannot carry (NICs attached to
// some GPUs only, GPUs sharing PCIe switches, missing NVLinks, a GPU not in the catalog) is
// listed in the layout's notes and under the document's "imported" key, with the file's devices
// and links. An nccl-tests log also calibrates cluster.tuning.efficiency so the modelled bus
// bandwidth at the largest size matches the measured one; "imported.calibration" keeps the
// measured and modelled bus bandwidth per size for charts.
Layout layoutFromImport(const ImportedMachine &machine,
                        const Catalog &catalog,
                        const ImportOptions &options = {});

// The server as the file shows it (layout format 2): GPUs, the NICs near them, PCIe switches,
// CPUs, NVLinks (an NVSwitch fabric or each pair's bundle). nullopt for formats that do not
// describe the board (nccl-tests logs, NCCL graphs).
std::optional<ServerTemplate> serverFromImport(const ImportedMachine &machine, const GpuSpec &gpu);

} // namespace railyard::engine
