// The XML reader under the NCCL importers (engine/base/xmlreader.cpp, on expat): the tree it
// gives, and the hostile files it refuses fast with the file, the line, the column and why:
// entity attacks, nesting past the depth limit, too many elements or attributes, long values
// and names, and bytes that are not UTF-8.
#include "base/inputerror.h"
#include "base/xmlreader.h"

#include <QStringDecoder>
#include <QTest>

using namespace railyard::engine;

namespace {

// Parses `text` as `file`, expecting an InputError whose message starts with the file and
// holds every part of `expected`; returns the message.
std::string refused(const std::string &text, const QStringList &expected)
{
    const std::string file = "hostile.xml";
    try {
        parseXml(text, file);
    } catch (const InputError &e) {
        const std::string what = e.what();
        QStringDecoder utf8(QStringDecoder::Utf8);
        const QString msg = utf8(QByteArray::fromStdString(what));
        qInfo("%s", qPrintable(msg.left(300)));
        if (utf8.hasError())
            return "the message is not valid UTF-8: " + what;
        if (what.rfind(file + ": line ", 0) != 0)
            return "the message does not start with the file and the line: " + what;
        if (what.size() > 1000)
            return "the message is " + std::to_string(what.size()) + " bytes long";
        for (const QString &part : expected)
            if (!msg.contains(part))
                return "the message lacks \"" + part.toStdString() + "\": " + what;
        return {};
    }
    return "no error";
}

#define REFUSED(text, ...) \
    do { \
        const std::string problem_ = refused(text, __VA_ARGS__); \
        QVERIFY2(problem_.empty(), problem_.c_str()); \
    } while (false)

std::string nested(int levels)
{
    std::string xml;
    for (int i = 0; i < levels; ++i)
        xml += "<pci>";
    for (int i = 0; i < levels; ++i)
        xml += "</pci>";
    return xml;
}

} // namespace

class TestXmlReader : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void tree()
    {
        const std::string text
                = "\xEF\xBB\xBF<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                  "<!-- dumped by NCCL -->\n"
                  "<system version=\"1\">\n"
                  "  <cpu numaid=\"0\" arch='x86_64'>\n"
                  "    text is skipped &amp; &#65; &#x42;\n"
                  "    <pci busid=\"0000:01:00.0\" vendor=\"&amp;&lt;&gt;&quot;&apos;"
                  "&#233;&#x1F600;\"/>\n"
                  "    <nic/>\n"
                  "  </cpu>\n"
                  "</system>\n";
        const XmlElement root = parseXml(text, "tree.xml");
        QCOMPARE(root.name, std::string("system"));
        QCOMPARE(root.line, 3);
        QCOMPARE(root.attributeOr("version"), std::string("1"));
        QVERIFY(!root.attribute("missing"));
        QCOMPARE(root.attributeOr("missing", "fallback"), std::string("fallback"));
        QCOMPARE(root.children.size(), std::size_t(1));
        const XmlElement &cpu = root.children[0];
        QCOMPARE(cpu.line, 4);
        QCOMPARE(cpu.attributes.size(), std::size_t(2));
        QCOMPARE(cpu.attributes[1].first, std::string("arch"));
        QCOMPARE(cpu.attributes[1].second, std::string("x86_64"));
        QCOMPARE(cpu.children.size(), std::size_t(2));
        QCOMPARE(cpu.children[0].name, std::string("pci"));
        QCOMPARE(cpu.children[0].line, 6);
        QCOMPARE(cpu.children[0].attributeOr("vendor"),
                 std::string("&<>\"'\xC3\xA9\xF0\x9F\x98\x80"));
        QCOMPARE(cpu.children[1].name, std::string("nic"));
        QCOMPARE(cpu.children[1].line, 7);
    }

    // Blank lines before the XML declaration are skipped (expat alone refuses them), and still
    // counted in the lines given.
    void blankLinesBeforeTheDeclaration()
    {
        const XmlElement root
                = parseXml("\n\n  <?xml version=\"1.0\"?>\n<system>\n<cpu/>\n</system>",
                           "blank.xml");
        QCOMPARE(root.line, 4);
        QCOMPARE(root.children.at(0).line, 5);
        REFUSED("\n\n  <?xml version=\"1.0\"?><system></sys>", {"line 3, column 34", "</sys>"});
    }

    void malformed_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QStringList>("expected");
        QTest::newRow("empty") << QByteArray("  \n") << QStringList{"line 2", "no root element"};
        QTest::newRow("not XML") << QByteArray("GPU0\tGPU1\n")
                                 << QStringList{"line 1, column 1", "expected '<'", "\"G\""};
        QTest::newRow("cut short")
                << QByteArray("<system>\n  <cpu numaid=\"0\">\n    <pci/>\n")
                << QStringList{"line 4", "<cpu> (line 2) is never closed: the file is cut short"};
        QTest::newRow("cut inside a tag")
                << QByteArray("<system>\n<cpu numaid=\"0") << QStringList{"line 2", "cut short"};
        QTest::newRow("mismatched")
                << QByteArray("<system>\n<cpu>\n</pci>\n</system>\n")
                << QStringList{"line 3, column 3", "</pci> closes <cpu> opened on line 2"};
        QTest::newRow("text after the root")
                << QByteArray("<system/>\n<system/>")
                << QStringList{"line 2, column 1", "text after the root element </system>"};
        QTest::newRow("duplicate attribute")
                << QByteArray("<system>\n<gpu dev=\"0\" dev=\"1\"/></system>")
                << QStringList{"line 2, column 14", "appears twice"};
        QTest::newRow("'<' in a value")
                << QByteArray("<system a=\"<\"/>") << QStringList{"line 1", "not well-formed"};
        QTest::newRow("bad character reference") << QByteArray("<system a=\"&#xD800;\"/>")
                                                 << QStringList{"line 1", "invalid code point"};
        QTest::newRow("CDATA") << QByteArray("<system><![CDATA[x]]></system>")
                               << QStringList{"line 1, column 9", "CDATA"};
        QTest::newRow("processing instruction")
                << QByteArray("<system>\n<?php x ?></system>")
                << QStringList{"line 2, column 1", "processing instruction"};
        QTest::newRow("late declaration") << QByteArray("<system/>\n<?xml version=\"1.0\"?>")
                                          << QStringList{"line 2", "text after the root element"};
        QTest::newRow("declaration inside")
                << QByteArray("<system>\n<?xml version=\"1.0\"?></system>")
                << QStringList{"line 2", "XML declaration"};
    }
    void malformed()
    {
        QFETCH(QByteArray, text);
        QFETCH(QStringList, expected);
        REFUSED(text.toStdString(), expected);
    }

    // No entity is ever declared, so none is expanded: billion laughs (internal entities
    // doubling up), a quadratic blow-up and an external entity all stop at the <!DOCTYPE, at
    // once, before any element is read.
    void entityAttacks_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("where");
        QByteArray laughs = "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n <!ENTITY lol0 \"lol\">\n";
        for (int i = 1; i <= 9; ++i) {
            laughs += " <!ENTITY lol" + QByteArray::number(i) + " \"";
            for (int k = 0; k < 10; ++k)
                laughs += "&lol" + QByteArray::number(i - 1) + ";";
            laughs += "\">\n";
        }
        laughs += "]>\n<system version=\"&lol9;\">&lol9;</system>\n";
        QTest::newRow("billion laughs") << laughs << "line 2";
        const QByteArray big(60000, 'x');
        QTest::newRow("quadratic blow-up")
                << QByteArray("<!DOCTYPE s [<!ENTITY a \"" + big + "\">]>\n<s>"
                              + QByteArray("&a;").repeated(20000) + "</s>")
                << "line 1";
        QTest::newRow("external entity")
                << QByteArray("<?xml version=\"1.0\"?>\n<!DOCTYPE system [<!ENTITY xxe SYSTEM "
                              "\"file:///etc/passwd\">]>\n<system version=\"&xxe;\"/>")
                << "line 2";
        QTest::newRow("external DTD")
                << QByteArray("<!DOCTYPE system SYSTEM \"http://example.org/evil.dtd\">\n<system/>")
                << "line 1";
        QTest::newRow("parameter entity")
                << QByteArray("<!DOCTYPE s [<!ENTITY % p \"<!ENTITY q 'x'>\"> %p;]>\n<s>&q;</s>")
                << "line 1";
    }
    void entityAttacks()
    {
        QFETCH(QByteArray, text);
        QFETCH(QString, where);
        // Refused at the DTD, before any entity is defined, so nothing can be expanded.
        REFUSED(text.toStdString(), {where, "a DTD (<!DOCTYPE", "entity definitions are refused"});
    }

    // Without a DTD an entity is undefined: named, never expanded.
    void undefinedEntity()
    {
        REFUSED("<system version=\"&amp;&xxe;\">\n</system>\n",
                {"line 1", "the entity &xxe; is not one of XML's five", "not expanded"});
        REFUSED("<system>\n  text &lol9; </system>", {"line 2", "&lol9;"});
    }

    // kMaxXmlDepth levels are read; one more is refused where it opens, at once, however
    // deep the file goes on.
    void depthLimit()
    {
        const XmlElement root = parseXml(nested(kMaxXmlDepth), "deep.xml");
        const XmlElement *e = &root;
        int depth = 1;
        for (; !e->children.empty(); e = &e->children.front())
            ++depth;
        QCOMPARE(depth, kMaxXmlDepth);
        const int column = 5 * kMaxXmlDepth + 1; // the 65th <pci>
        REFUSED(nested(kMaxXmlDepth + 1),
                {"line 1, column " + QString::number(column), "deeper than 64 levels"});
        // Five MiB of blanks, then a million levels: refused where the 65th opens.
        REFUSED(std::string(5 << 20, ' ') + nested(1 << 20),
                {"line 1, column " + QString::number((5 << 20) + column), "deeper than 64 levels"});
    }

    void sizeLimits()
    {
        std::string many = "<system>";
        for (std::size_t i = 0; i + 1 < kMaxXmlElements; ++i)
            many += "<a/>";
        QCOMPARE(parseXml(many + "</system>", "many.xml").children.size(), kMaxXmlElements - 1);
        REFUSED(many + "<a/></system>", {"line 1", "more than 200000 elements"});

        std::string attributes = "<gpu";
        for (std::size_t i = 0; i < kMaxXmlAttributes; ++i)
            attributes += " a" + std::to_string(i) + "=\"1\"";
        QCOMPARE(parseXml(attributes + "/>", "attrs.xml").attributes.size(), kMaxXmlAttributes);
        REFUSED(attributes + " one-more=\"1\"/>", {"line 1", "more than 64 attributes in <gpu>"});

        const std::string value(kMaxXmlValueBytes, 'v');
        QCOMPARE(parseXml("<gpu a=\"" + value + "\"/>", "value.xml").attributeOr("a"), value);
        REFUSED("<gpu a=\"" + value + "v\"/>", {"line 1", "longer than 4096 bytes"});

        const std::string name(256, 'n');
        QCOMPARE(parseXml("<" + name + "/>", "name.xml").name, name);
        REFUSED("<" + name + "n/>", {"line 1", "a name longer than 256"});
        REFUSED("<gpu " + name + "n=\"1\"/>", {"line 1", "a name longer than 256"});
    }

    // Bytes that are not UTF-8 are refused at the first one, with the byte, in names,
    // values and text alike; the message itself stays UTF-8.
    void badUtf8_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QStringList>("expected");
        QTest::newRow("Latin-1 in a value") << QByteArray("<system a=\"caf\xE9\"/>")
                                            << QStringList{"line 1, column 15", "(\\xE9)"};
        QTest::newRow("Latin-1 in a name") << QByteArray("<system>\n  <gp\xE9u/></system>")
                                           << QStringList{"line 2, column 6", "(\\xE9)"};
        QTest::newRow("cut sequence in text") << QByteArray("<system>\n  text \xC3\x28 x</system>")
                                              << QStringList{"line 2, column 8", "(\\xC3)"};
        QTest::newRow("surrogate") << QByteArray("<system>\n  \xED\xA0\x80</system>")
                                   << QStringList{"line 2, column 3", "(\\xED)"};
        QTest::newRow("overlong '<'") << QByteArray("<system>\xC0\xBC</system>")
                                      << QStringList{"line 1, column 9", "(\\xC0)"};
        QTest::newRow("past U+10FFFF") << QByteArray("<system a=\"\xF4\x90\x80\x80\"/>")
                                       << QStringList{"line 1, column 12", "(\\xF4)"};
        QTest::newRow("cut at the end")
                << QByteArray("<system a=\"\xE2\x82") << QStringList{"line 1"};
    }
    void badUtf8()
    {
        QFETCH(QByteArray, text);
        QFETCH(QStringList, expected);
        REFUSED(text.toStdString(), expected);
        if (QByteArray(QTest::currentDataTag()) != "cut at the end")
            REFUSED(text.toStdString(), {"a byte that is not UTF-8", "save the file as UTF-8"});
    }

    // Valid UTF-8 anywhere, in names too, is read as it is.
    void utf8()
    {
        const XmlElement root = parseXml("<syst\xC3\xA8me n\xC3\xBCm=\"\xE2\x82\xAC\"/>", "u.xml");
        QCOMPARE(root.name, std::string("syst\xC3\xA8me"));
        QCOMPARE(root.attributeOr("n\xC3\xBCm"), std::string("\xE2\x82\xAC"));
    }
};

QTEST_APPLESS_MAIN(TestXmlReader)
#include "tst_xmlreader.moc"
