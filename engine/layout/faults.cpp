#include "layout/faults.h"

#include "base/jsoncursor.h"
#include "base/units.h"

#include <cmath>

namespace railyard::engine {

const char *toString(FaultState state)
{
    return state == FaultState::Degraded ? "degraded" : "down";
}

std::string Fault::targetText() const
{
    switch (target) {
    case FaultTarget::Device: return device;
    case FaultTarget::Link:
        return linkId ? "link " + std::to_string(*linkId) : "link \"" + linkName + "\"";
    case FaultTarget::Rail: return "rail " + std::to_string(rail);
    }
    return device;
}

std::string Fault::describe() const
{
    const std::string what = targetText();
    if (state == FaultState::Down)
        return what + " down";
    if (slowdown)
        return what + " runs " + formatNumber(*slowdown, 3) + "x slower (a straggler)";
    if (lanesDown)
        return what + " with " + std::to_string(*lanesDown) + " lane" + (*lanesDown == 1 ? "" : "s")
               + " missing";
    return what + " at " + formatNumber(100 * rate.value_or(1), 3) + "% of its rate";
}

std::string faultPath(std::size_t index)
{
    return "/cluster/faults/" + std::to_string(index);
}

namespace {

Fault readFault(const JsonCursor &c)
{
    c.requireObject();
    Fault f;
    const auto device = c.find("device");
    const auto link = c.find("link");
    const auto rail = c.find("rail");
    const int named = (device ? 1 : 0) + (link ? 1 : 0) + (rail ? 1 : 0);
    if (named != 1)
        c.fail(std::string(named == 0 ? "expected" : "expected only one of")
               + " \"device\" (e.g. \"leaf 3\", \"NIC 17.3\", \"GPU 12\"), \"link\" (its id or "
                 "name in railyard evaluate --links all --json) or \"rail\" (a NIC position)");
    if (device) {
        f.target = FaultTarget::Device;
        f.device = device->toString();
        if (f.device.empty())
            device->expected("a device name such as \"leaf 3\" or \"GPU 12\"");
    } else if (link) {
        f.target = FaultTarget::Link;
        if (link->value().is_string()) {
            f.linkName = link->toString();
            if (f.linkName.empty())
                link->expected("a link id or name");
        } else {
            f.linkId = static_cast<int>(link->toInt(0, 1'000'000'000));
        }
    } else {
        f.target = FaultTarget::Rail;
        f.rail = static_cast<int>(rail->toInt(0, 1024));
    }
    if (const auto r = c.find("rate")) {
        if (!r->value().is_number() || r->value().get<double>() <= 0 || r->value().get<double>() > 1)
            r->expected("the fraction of line rate left, a number above 0 and at most 1 (a link "
                        "with nothing left is \"state\": \"down\")");
        f.rate = r->toDouble(0, 1);
    }
    if (const auto s = c.find("slowdown")) {
        if (f.target != FaultTarget::Device)
            s->fail("a slowdown is a GPU's (a straggler): name it with \"device\": \"GPU n\"");
        f.slowdown = s->toDouble(1, 100);
    }
    if (const auto l = c.find("lanes_down"))
        f.lanesDown = static_cast<int>(l->toInt(1, 1024));
    const int measures = (f.rate ? 1 : 0) + (f.slowdown ? 1 : 0) + (f.lanesDown ? 1 : 0);
    if (measures > 1)
        c.fail("expected one of \"rate\", \"slowdown\" and \"lanes_down\": each says on its own "
               "how degraded the element is");
    if (const auto st = c.find("state")) {
        f.state = st->toChoice({"down", "degraded"}) == "degraded" ? FaultState::Degraded
                                                                   : FaultState::Down;
        if (f.state == FaultState::Down && measures > 0)
            st->fail("\"down\" takes no rate, slowdown or lanes_down (write \"state\": "
                     "\"degraded\" for an element that still runs)");
        if (f.state == FaultState::Degraded && measures == 0)
            st->fail("\"degraded\" needs \"rate\" (the fraction of line rate left), "
                     "\"lanes_down\" (lanes missing from a bundle) or \"slowdown\" (a GPU)");
    } else {
        f.state = measures > 0 ? FaultState::Degraded : FaultState::Down;
    }
    return f;
}

} // namespace

std::vector<Fault> readFaults(const JsonCursor &c)
{
    c.requireArray();
    std::vector<Fault> out;
    out.reserve(c.size());
    for (std::size_t i = 0; i < c.size(); ++i)
        out.push_back(readFault(c.at(i)));
    return out;
}

namespace {

Json number(double v)
{
    if (v == std::floor(v) && std::fabs(v) < 1e15)
        return static_cast<std::int64_t>(v);
    return v;
}

} // namespace

Json faultsToJson(const std::vector<Fault> &faults)
{
    Json out = Json::array();
    for (const Fault &f : faults) {
        Json j = Json::object();
        switch (f.target) {
        case FaultTarget::Device: j["device"] = f.device; break;
        case FaultTarget::Link:
            if (f.linkId)
                j["link"] = *f.linkId;
            else
                j["link"] = f.linkName;
            break;
        case FaultTarget::Rail: j["rail"] = f.rail; break;
        }
        j["state"] = toString(f.state);
        if (f.rate)
            j["rate"] = number(*f.rate);
        if (f.slowdown)
            j["slowdown"] = number(*f.slowdown);
        if (f.lanesDown)
            j["lanes_down"] = *f.lanesDown;
        out.push_back(std::move(j));
    }
    return out;
}

} // namespace railyard::engine
