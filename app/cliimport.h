#pragma once

#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

namespace railyard::cli {

// A usage mistake in `railyard import` (exit 2).
struct ImportUsageError : std::runtime_error
{
    using std::runtime_error::runtime_error;
};

// `railyard import IN -o OUT.railyard.json [--gpu ID] [--json]`: reads IN (the format is found
// from its content), writes the nearest layout to OUT, summarises on `err` (or prints the
// summary as JSON on `out` with --json). Returns the exit status; throws InputError for a bad
// file and ImportUsageError for bad arguments.
int runImport(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);

} // namespace railyard::cli
