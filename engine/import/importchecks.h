#pragma once

#include "import/importedmachine.h"
#include "layout/catalog.h"

#include <string>

namespace railyard::engine {

// What the hardware allows, checked on an imported board before it is priced. `gpu` is the
// catalog GPU the file's GPUs are known to be (named by --gpu, the file or its name), or nullptr
// when it was only assumed; `source` says how it was chosen ("--gpu", "read from the file"),
// for the message. Throws InputError naming the file, the line (and column, for a topo -m cell) and
// what the hardware allows: an NVLink bundle of more lanes than the GPU has ("GPU3 row, column
// GPU5: NV24, but the catalog's H100-SXM has 18 NVLink lanes per GPU"), or a GPU whose lanes
// add up to more than it has (a direct mesh whose row sums past the GPU's lanes; the XML
// <nvlink> counts of one GPU). Without a known GPU the limit is the most lanes any catalog GPU
// has.
void checkNvlinkLanes(const ImportedMachine &machine,
                      const Catalog &catalog,
                      const GpuSpec *gpu,
                      const std::string &source);

} // namespace railyard::engine
