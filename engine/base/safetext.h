#pragma once

// Text from a file (a layout's title, a device's name, an importer's string) on its way into
// another format: a terminal, SVG, PDF metadata, Markdown, CSV or JSON. Files from others are
// hostile: a title may hold "</title><script>", an escape sequence that repaints the terminal,
// or "=cmd|..." that a spreadsheet runs. Each writer takes its text through one of these.
//
// "Control characters" here are C0 (U+0000 to U+001F), DEL (U+007F), C1 (U+0080 to U+009F) and
// the Unicode bidirectional overrides and isolates (U+202A to U+202E, U+2066 to U+2069), which
// reorder what a reader sees.

#include <string>
#include <string_view>

namespace railyard::engine {

// For a terminal (text output, messages): control characters and bytes that are not UTF-8 are
// written as \xNN, byte by byte (ESC is \x1B, U+0085 is \xC2\x85); everything else as is.
std::string terminalText(std::string_view text);
// The same for several lines: line feeds are kept.
std::string terminalLines(std::string_view text);

// For XML character data or an attribute value (SVG): & < > " ' as entities, control
// characters (tab and line breaks included: XML would fold them anyway), U+FFFE and U+FFFF
// and bytes that are not UTF-8 replaced by U+FFFD.
std::string xmlText(std::string_view text);

// One line of plain text (PDF metadata, a label drawn on a page): line breaks and tabs become
// spaces, other control characters, U+FFFE, U+FFFF and bytes that are not UTF-8 become U+FFFD.
std::string plainText(std::string_view text);

// A Markdown table cell, heading or list item: plainText(), then every character Markdown or
// inline HTML gives a meaning (\ ` * _ [ ] < > | # ! ~ &) backslash-escaped, so a name renders
// as written and never breaks the table or opens a tag.
std::string markdownText(std::string_view text);

// Appends a CSV text field (RFC 4180): quoted when it holds a comma, a quote or a line break.
// A field starting with = + - @, a tab or a carriage return, which a spreadsheet would read as
// a formula, is prefixed with ' (OWASP's advice on CSV injection). Control characters other
// than tab and line breaks, and bytes that are not UTF-8, become U+FFFD. Numbers are not text
// fields: write them as they are.
void appendCsvText(std::string &out, std::string_view text);

// A JSON text as written by a JSON library, made safe for a terminal: DEL, C1 and bidirectional
// control characters, which JSON allows raw in strings, are written as \u escapes. Outside strings
// a JSON text holds only ASCII, so this never changes its meaning.
std::string jsonForTerminal(std::string json);

} // namespace railyard::engine
