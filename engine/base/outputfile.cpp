#include "base/outputfile.h"

#include "base/inputerror.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ostream>
#include <streambuf>

namespace railyard::engine {

namespace {

std::string reason(int err)
{
    return std::strerror(err);
}

[[noreturn]] void fail(const std::string &path, const std::string &why)
{
    throw InputError(path, "", why);
}

std::string folderOf(const std::string &path)
{
    const auto slash = path.find_last_of('/');
    if (slash == std::string::npos)
        return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

std::string nameOf(const std::string &path)
{
    const auto slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "a FIFO (named pipe)", ... for what is not a regular file.
std::string kindOf(const struct stat &st)
{
    if (S_ISDIR(st.st_mode))
        return "a folder";
    if (S_ISCHR(st.st_mode))
        return "a character device";
    if (S_ISBLK(st.st_mode))
        return "a block device";
    if (S_ISFIFO(st.st_mode))
        return "a FIFO (named pipe)";
    if (S_ISSOCK(st.st_mode))
        return "a socket";
    return "not a regular file";
}

// A name that does not exist yet may be created only in an existing folder.
void checkFolder(const std::string &path, const std::string &name)
{
    const std::string dir = folderOf(name);
    struct stat st = {};
    if (::stat(dir.c_str(), &st) != 0)
        fail(path,
             "cannot write: the folder " + echo(dir) + " cannot be used (" + reason(errno) + ")");
    if (!S_ISDIR(st.st_mode))
        fail(path, "cannot write: " + echo(dir) + " is not a folder");
}

// Writes into a file descriptor through a buffer, keeping the first error's errno.
class FdBuffer : public std::streambuf
{
public:
    explicit FdBuffer(int fd)
        : m_fd(fd)
    {
        setp(m_buf, m_buf + sizeof m_buf);
    }
    int error() const { return m_error; }

protected:
    int_type overflow(int_type c) override
    {
        if (!drain())
            return traits_type::eof();
        if (!traits_type::eq_int_type(c, traits_type::eof())) {
            *pptr() = traits_type::to_char_type(c);
            pbump(1);
        }
        return traits_type::not_eof(c);
    }
    std::streamsize xsputn(const char *s, std::streamsize n) override
    {
        if (n < epptr() - pptr()) {
            std::memcpy(pptr(), s, static_cast<std::size_t>(n));
            pbump(static_cast<int>(n));
            return n;
        }
        if (!drain() || !writeAll(s, static_cast<std::size_t>(n)))
            return 0;
        return n;
    }
    int sync() override { return drain() ? 0 : -1; }

private:
    bool drain()
    {
        const std::size_t n = static_cast<std::size_t>(pptr() - pbase());
        setp(m_buf, m_buf + sizeof m_buf);
        return writeAll(m_buf, n);
    }
    bool writeAll(const char *s, std::size_t n)
    {
        if (m_error)
            return false;
        while (n > 0) {
            const ssize_t w = ::write(m_fd, s, n);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                m_error = w < 0 ? errno : EIO;
                return false;
            }
            s += w;
            n -= static_cast<std::size_t>(w);
        }
        return true;
    }

    int m_fd;
    int m_error = 0;
    char m_buf[1 << 16];
};

// A free hidden name beside the target: ".NAME.tmp-PID-N".
std::string tempName(const std::string &target, int attempt)
{
    return folderOf(target) + "/." + nameOf(target) + ".tmp-" + std::to_string(::getpid()) + "-"
           + std::to_string(attempt);
}

// Creates a named temporary file beside `target` (0666 less the umask); sets `name`.
int openNamed(const std::string &target, std::string &name)
{
    for (int attempt = 0; attempt < 1000; ++attempt) {
        name = tempName(target, attempt);
        const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

// Gives the unnamed file `fd` the name `name` beside the target.
bool linkUnnamed(int fd, const std::string &target, std::string &name)
{
    const std::string proc = "/proc/self/fd/" + std::to_string(fd);
    for (int attempt = 0; attempt < 1000; ++attempt) {
        name = tempName(target, attempt);
        if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0)
            return true;
        if (errno == EEXIST)
            continue;
        if (::linkat(fd, "", AT_FDCWD, name.c_str(), AT_EMPTY_PATH) == 0)
            return true;
        if (errno != EEXIST)
            return false;
    }
    return false;
}

// Copies the unnamed file `from` into a new named file (when it cannot be linked: no /proc).
int copyToNamed(int from, const std::string &target, std::string &name)
{
    const int to = openNamed(target, name);
    if (to < 0)
        return -1;
    char buf[1 << 16];
    off_t at = 0;
    for (;;) {
        const ssize_t n = ::pread(from, buf, sizeof buf, at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                return to;
            break;
        }
        FdBuffer sink(to);
        if (sink.sputn(buf, n) != n || sink.pubsync() != 0) {
            errno = sink.error() ? sink.error() : EIO;
            break;
        }
        at += n;
    }
    const int err = errno;
    ::close(to);
    ::unlink(name.c_str());
    errno = err;
    return -1;
}

// The replaced file's permissions, and (for root) its owner: a best effort, as a new file's
// defaults are what is left when it fails.
void keepModeAndOwner(int fd, const std::string &target)
{
    struct stat st = {};
    if (::stat(target.c_str(), &st) != 0)
        return;
    if (::fchmod(fd, st.st_mode & 07777) != 0)
        return;
    if (::geteuid() == 0 && ::fchown(fd, st.st_uid, st.st_gid) != 0)
        return;
}

} // namespace

std::string OutputTarget::notice() const
{
    if (!followedSymlink)
        return {};
    return echo(path) + " is a symbolic link: wrote its target " + echo(target);
}

OutputTarget checkOutputFile(const std::string &path, const std::vector<std::string> &inputs)
{
    OutputTarget t;
    t.path = t.target = path;
    if (path.empty())
        fail(path, "cannot write: the output file name is empty");
    struct stat st = {};
    for (int hops = 0;; ++hops) {
        if (::lstat(t.target.c_str(), &st) != 0) {
            if (errno != ENOENT)
                fail(path, "cannot write: " + reason(errno));
            checkFolder(path, t.target);
            return t; // a new file
        }
        if (!S_ISLNK(st.st_mode))
            break;
        if (hops == 40)
            fail(path, "cannot write: " + reason(ELOOP));
        std::string link(4096, '\0');
        const ssize_t n = ::readlink(t.target.c_str(), link.data(), link.size());
        if (n < 0 || std::size_t(n) >= link.size())
            fail(path, "cannot write: cannot read the symbolic link " + echo(t.target));
        link.resize(static_cast<std::size_t>(n));
        t.target = link.front() == '/' ? link : folderOf(t.target) + "/" + link;
        t.followedSymlink = true;
    }
    const std::string via = t.followedSymlink ? "it is a symbolic link to " + echo(t.target) + ", "
                                              : "it is ";
    if (!S_ISREG(st.st_mode))
        fail(path, "refusing to write: " + via + kindOf(st) + ", not a regular file");
    for (const std::string &input : inputs) {
        struct stat in = {};
        if (!input.empty() && ::stat(input.c_str(), &in) == 0 && in.st_dev == st.st_dev
            && in.st_ino == st.st_ino)
            fail(path,
                 "refusing to write: " + via + "the same file as the input " + echo(input)
                         + " (give another output file)");
    }
    t.exists = true;
    return t;
}

OutputTarget writeOutputFile(const std::string &path,
                             const std::function<void(std::ostream &)> &write,
                             const std::vector<std::string> &inputs)
{
    const OutputTarget t = checkOutputFile(path, inputs);
    const std::string dir = folderOf(t.target);
    std::string name; // the named temporary file, once there is one
    int fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
    const bool unnamed = fd >= 0;
    if (!unnamed)
        fd = openNamed(t.target, name);
    if (fd < 0)
        fail(path, "cannot write: " + reason(errno));
    const auto abandon = [&] {
        if (fd >= 0)
            ::close(fd);
        if (!name.empty())
            ::unlink(name.c_str());
    };
    if (t.exists)
        keepModeAndOwner(fd, t.target);
    int err = 0;
    {
        FdBuffer buffer(fd);
        std::ostream stream(&buffer);
        try {
            write(stream);
        } catch (...) {
            abandon();
            throw;
        }
        stream.flush();
        err = buffer.error() ? buffer.error() : stream ? 0 : EIO;
    }
    if (!err && ::fsync(fd) != 0 && errno != EINVAL)
        err = errno;
    if (!err && unnamed && !linkUnnamed(fd, t.target, name)) {
        name.clear();
        const int copy = copyToNamed(fd, t.target, name);
        if (copy < 0) {
            err = errno;
            name.clear();
        } else {
            ::close(fd);
            fd = copy;
            if (::fsync(fd) != 0 && errno != EINVAL)
                err = errno;
        }
    }
    if (err) {
        abandon();
        fail(path, "cannot write: " + reason(err));
    }
    const int closed = ::close(fd);
    fd = -1;
    if (closed != 0) {
        err = errno;
        abandon();
        fail(path, "cannot write: " + reason(err));
    }
    if (::rename(name.c_str(), t.target.c_str()) != 0) {
        err = errno;
        abandon();
        fail(path, "cannot write: " + reason(err));
    }
    if (const int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); d >= 0) {
        ::fsync(d); // the rename itself survives a power cut
        ::close(d);
    }
    return t;
}

} // namespace railyard::engine
