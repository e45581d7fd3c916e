#include "base/boundedread.h"

#include "base/inputerror.h"
#include "base/units.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace railyard::engine {

std::string readBoundedFile(const std::string &path,
                            std::size_t cap,
                            const std::string &expected,
                            const std::string &capNoun)
{
    // stat first, and open without blocking: a FIFO with no writer, a device or a directory
    // must be refused at once, not waited on.
    struct stat st
    {};
    if (::stat(path.c_str(), &st) != 0)
        throw InputError(path, "", std::string("cannot open: ") + std::strerror(errno));
    const auto notAFile = [&](mode_t mode) {
        if (S_ISDIR(mode))
            throw InputError(path, "", "is a directory; expected " + expected);
        if (!S_ISREG(mode))
            throw InputError(path,
                             "",
                             std::string("is ")
                                     + (S_ISFIFO(mode)   ? "a FIFO"
                                        : S_ISSOCK(mode) ? "a socket"
                                        : S_ISCHR(mode)  ? "a character device"
                                        : S_ISBLK(mode)  ? "a block device"
                                                         : "not a regular file")
                                     + "; expected " + expected);
    };
    notAFile(st.st_mode);
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        throw InputError(path, "", std::string("cannot open: ") + std::strerror(errno));
    struct Closer
    {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    // The file may have been replaced between stat and open.
    if (::fstat(fd, &st) != 0)
        throw InputError(path, "", std::string("cannot read: ") + std::strerror(errno));
    notAFile(st.st_mode);
    const auto tooLarge = [&](long long bytes) {
        return InputError(path,
                          "",
                          "the file is " + formatNumber(static_cast<double>(bytes) / 1048576.0, 3)
                                  + " MiB; " + capNoun + " is at most " + std::to_string(cap >> 20)
                                  + " MiB");
    };
    if (static_cast<unsigned long long>(st.st_size) > cap)
        throw tooLarge(st.st_size);
    // Read to the end (the size may be 0 for /proc-like files, or change), never past the cap.
    std::string text;
    text.reserve(static_cast<std::size_t>(st.st_size));
    char buffer[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            throw InputError(path, "", std::string("cannot read: ") + std::strerror(errno));
        }
        if (n == 0)
            break;
        text.append(buffer, static_cast<std::size_t>(n));
        if (text.size() > cap)
            throw tooLarge(static_cast<long long>(text.size()));
    }
    return text;
}

} // namespace railyard::engine
