#pragma once

#include <stdexcept>
#include <string>

namespace railyard::engine {

// A problem with something the user gave us (a file, a flag, a configuration). The message names
// the file, the place in it and what was expected, so it can be shown as is.
class InputError : public std::runtime_error
{
public:
    InputError(std::string file, std::string where, const std::string &message)
        : std::runtime_error(compose(file, where, message))
        , m_file(std::move(file))
        , m_where(std::move(where))
        , m_message(message)
    {}
    explicit InputError(const std::string &message)
        : std::runtime_error(message)
        , m_message(message)
    {}

    const std::string &file() const { return m_file; }
    // A JSON path such as "/cluster/nodes", or "line 12, column 5".
    const std::string &where() const { return m_where; }
    const std::string &message() const { return m_message; }

private:
    static std::string compose(const std::string &file,
                               const std::string &where,
                               const std::string &message)
    {
        std::string s = file.empty() ? std::string("<input>") : file;
        if (!where.empty())
            s += ": " + where;
        return s + ": " + message;
    }

    std::string m_file;
    std::string m_where;
    std::string m_message;
};

} // namespace railyard::engine
