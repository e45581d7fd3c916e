# cmake -DINPUT=file -DOUTPUT=out.cpp -DSYMBOL=name -P EmbedText.cmake
# Writes a C++ file defining `const char *const railyard::engine::<SYMBOL>` with the file's text.
file(READ "${INPUT}" content)
set(delim "railyard_embed")
string(FIND "${content}" ")${delim}\"" clash)
if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${INPUT} contains the raw-string delimiter )${delim}\"")
endif()
file(WRITE "${OUTPUT}.tmp"
    "// Generated from ${INPUT}; do not edit.\n"
    "namespace railyard::engine {\n"
    "extern const char *const ${SYMBOL};\n"
    "const char *const ${SYMBOL} = R\"${delim}(${content})${delim}\";\n"
    "}\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
