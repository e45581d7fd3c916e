#pragma once

// The one policy for every file Railyard writes on the user's behalf (`import -o`, `export -o`,
// a saved layout): write only regular files, whole or not at all.
//
// - The target is resolved first. A symbolic link is followed only to a regular file, or to a
//   name that does not exist yet in an existing folder; the result says it was followed.
// - A folder, a device (/dev/null, a disk), a FIFO or a socket is refused, and so is the same
//   file as one of the inputs (compared by device and inode, so a hard link or a symlink to
//   the input is caught too).
// - The bytes go into a temporary file in the target's folder (an unnamed O_TMPFILE file where
//   the file system has them, so a process killed mid-write leaves nothing behind; else a
//   hidden named one, removed on any failure), are synced to disk and renamed over the target.
//   An existing file's permissions are kept; a new one gets 0666 less the umask.
// - Every failure is an InputError naming the output and the reason, and leaves the target as
//   it was.

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace railyard::engine {

struct OutputTarget
{
    std::string path;             // as given
    std::string target;           // the file that is replaced or created
    bool followedSymlink = false; // `path` is a symbolic link to `target`
    bool exists = false;          // `target` is an existing regular file

    // "OUT is a symbolic link: wrote its target TARGET" when one was followed, else empty.
    std::string notice() const;
};

// Checks that `path` may be written under the policy above, without writing anything.
// `inputs` are the files the output is made from (missing ones are ignored). Throws InputError.
OutputTarget checkOutputFile(const std::string &path, const std::vector<std::string> &inputs = {});

// Checks `path`, then writes what `write` puts into the stream atomically. An exception from
// `write` leaves the target as it was and is rethrown. Returns what was written.
OutputTarget writeOutputFile(const std::string &path,
                             const std::function<void(std::ostream &)> &write,
                             const std::vector<std::string> &inputs = {});

} // namespace railyard::engine
