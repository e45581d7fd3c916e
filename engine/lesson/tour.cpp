#include "lesson/tour.h"

#include "base/jsoncursor.h"

#include <set>

namespace railyard::engine {

namespace {

std::string requiredText(const JsonCursor &c, const char *key)
{
    const JsonCursor v = c.at(key);
    std::string s = v.toString();
    if (s.find_first_not_of(" \t\r\n") == std::string::npos)
        v.expected("a non-empty text");
    return s;
}

TourLayout readTourLayout(const JsonCursor &c)
{
    c.requireObject();
    TourLayout l;
    const JsonCursor file = c.at("file");
    l.file = file.toString();
    // Plain names of shipped layouts only: the app opens them from its resources and the tests
    // from the source tree's layouts/ folder.
    const std::string suffix = ".railyard.json";
    if (l.file.size() <= suffix.size()
        || l.file.compare(l.file.size() - suffix.size(), suffix.size(), suffix) != 0
        || l.file.find_first_of("/\\") != std::string::npos || l.file.front() == '.')
        file.expected("the name of a file in layouts/ ending in .railyard.json");
    l.label = requiredText(c, "label");
    return l;
}

} // namespace

std::vector<TourScenario> parseTour(const std::string &text, const std::string &file)
{
    const Json doc = parseJsonText(text, file);
    const JsonCursor root(doc, file);
    root.requireObject();
    if (root.at("format").toString() != "railyard-tour")
        root.at("format").expected("\"railyard-tour\"");
    root.at("version").toInt(kTourFormatVersion, kTourFormatVersion);
    const JsonCursor list = root.at("scenarios");
    list.requireArray();
    std::vector<TourScenario> out;
    std::set<std::string> ids;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const JsonCursor c = list.at(i);
        c.requireObject();
        TourScenario s;
        const JsonCursor id = c.at("id");
        s.id = id.toString();
        if (s.id.empty()
            || s.id.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos)
            id.expected("an id of lower-case letters, digits and '-'");
        if (!ids.insert(s.id).second)
            id.fail("the id \"" + s.id + "\" is given to two scenarios");
        s.title = requiredText(c, "title");
        const JsonCursor layouts = c.at("layouts");
        layouts.requireArray();
        if (layouts.size() < 1 || layouts.size() > 2)
            layouts.expected("one or two layouts");
        for (std::size_t k = 0; k < layouts.size(); ++k)
            s.layouts.push_back(readTourLayout(layouts.at(k)));
        s.intro = requiredText(c, "intro");
        s.tryThis = requiredText(c, "try");
        s.lookFor = requiredText(c, "look_for");
        s.assumes = requiredText(c, "assumes");
        out.push_back(std::move(s));
    }
    if (out.empty())
        list.expected("at least one scenario");
    return out;
}

} // namespace railyard::engine
