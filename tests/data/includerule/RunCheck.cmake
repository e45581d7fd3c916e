# Runs cmake/CheckEngineIncludes.cmake on ENGINE_DIR and checks its verdict:
#   EXPECT=pass: exit 0.
#   EXPECT=fail: exit non-zero and every line of EXPECT_LINES (a list) in its output.
execute_process(
    COMMAND ${CMAKE_COMMAND} -DENGINE_DIR=${ENGINE_DIR} -DPRINT_MATRIX=ON -P ${SCRIPT}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
message("${all}")
if(EXPECT STREQUAL "pass")
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "the include rule fails on ${ENGINE_DIR} (exit ${rc})")
    endif()
else()
    if(rc EQUAL 0)
        message(FATAL_ERROR "the include rule passed ${ENGINE_DIR}, which holds planted violations")
    endif()
    foreach(line IN LISTS EXPECT_LINES)
        string(FIND "${all}" "${line}" at)
        if(at LESS 0)
            message(FATAL_ERROR "the include rule's output lacks: ${line}")
        endif()
    endforeach()
endif()
