#pragma once

#include "base/xmlreader.h"
#include "import/importedmachine.h"

#include <string>

namespace railyard::engine {

// Reads NCCL topology XML: NCCL_TOPO_DUMP_FILE dumps (<gpu>, <nvlink>, <nic>/<net>) and
// hand-written NCCL_TOPO_FILE inputs from cloud images, whose <pci> leaves name GPUs and NICs
// only by PCI class code.
class NcclTopoFilter
{
public:
    static bool sniff(const XmlElement &root) { return root.name == "system"; }
    // Throws InputError naming `file` and the element's line.
    static ImportedMachine read(const XmlElement &root, const std::string &file);
};

// Reads NCCL_GRAPH_DUMP_FILE / NCCL_GRAPH_FILE: <graphs><graph><channel> with the GPUs and NETs
// each ring or tree channel visits, kept for an overlay on the canvas.
class NcclGraphFilter
{
public:
    static bool sniff(const XmlElement &root) { return root.name == "graphs"; }
    static ImportedMachine read(const XmlElement &root, const std::string &file);
};

} // namespace railyard::engine
