#pragma once

#include <cstddef>
#include <string>

namespace railyard::engine {

// Reads a whole file of at most `cap` bytes, refusing at once what is not a regular file (a
// FIFO with no writer, a device, a directory: "is a FIFO; expected <expected>") and a file
// that is or grows too large ("the file is 40 MiB; <capNoun> is at most 32 MiB"). Errors are
// InputErrors naming the file. The layout loader and the importers read through it.
std::string readBoundedFile(const std::string &path,
                            std::size_t cap,
                            const std::string &expected,
                            const std::string &capNoun);

} // namespace railyard::engine
