#pragma once

#include "layout/catalog.h"

#include <cstddef>
#include <string>

namespace railyard::engine {

// The largest catalog file read (the built-in catalog is about 10 KB).
inline constexpr std::size_t kMaxCatalogBytes = std::size_t(4) << 20;

// Reads and parses a catalog file as the user's catalog ($RAILYARD_CATALOG, or
// ~/.config/railyard/catalog.json) is read: as a layout is, a regular file of at most
// kMaxCatalogBytes, refused at once when it is a FIFO, a device or a directory (never waited
// on), then checked in full by Catalog::fromJsonText: invalid JSON (line and column), a missing
// or mistyped key, a rate (TFLOPS, GB, TB/s, GB/s, Gb/s) that is not positive and finite, an
// id given twice (the JSON path of each). Throws InputError naming the file.
//
// Catalog::builtin() reads the user's file this way once. A bad one is not used at all (the
// compiled-in catalog is) and Catalog::userCatalogError() says why: "bad user catalog (from
// $RAILYARD_CATALOG): FILE: /gpus/2/nvlink/gb_per_s: expected a positive number of GB/s up to
// 100000, got 0". Nothing there throws for the user's file; the command line refuses to run
// (exit 1) and the GUI says it.
Catalog readCatalogFile(const std::string &path);

} // namespace railyard::engine
