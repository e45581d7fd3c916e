#pragma once

#include "import/importedmachine.h"

#include <string>
#include <vector>

namespace railyard::engine {

// Reads `nvidia-smi topo -m` (and `topo -mp`) output: the device matrix with NV#, PIX, PXB, PHB,
// NODE, SYS (and the legacy SOC), CPU and NUMA affinity, the NIC legend. Tabs or runs of spaces
// separate cells; the three header generations, raw IB device names as NIC labels, missing
// legends, indented pastes and terminal escape codes are accepted.
class TopoMatrixFilter
{
public:
    // True when the lines look like a topo matrix (a header naming GPU0 and "CPU Affinity").
    static bool sniff(const std::vector<std::string> &lines);
    // Throws InputError naming `file` and the line.
    static ImportedMachine read(const std::vector<std::string> &lines, const std::string &file);
};

} // namespace railyard::engine
