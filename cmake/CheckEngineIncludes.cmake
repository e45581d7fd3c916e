# The engine's include rule: each topic folder may include only the folders below it.
#
#   cmake -DENGINE_DIR=<dir> [-DSTAMP=<file>] [-DPRINT_MATRIX=ON] -P CheckEngineIncludes.cmake
#
# Scans every .h and .cpp under ENGINE_DIR's topic folders and fails (exit code 1, one line per
# violation: file:line, the include, and which folders that file may include) when
#   - a folder includes one it may not (the layers below),
#   - an engine header is included without its folder ("units.h" instead of "base/units.h"),
#   - a source sits in a folder the rule does not know (give a new folder its row below first),
#   - a file includes a Qt header (the engine is Qt-free; CheckNoQt.cmake guards the link).
# Run by the build (target check_engine_includes) and by ctest on the engine and on a planted
# violation (tests/data/includerule).

cmake_minimum_required(VERSION 3.25)

# The layers, lowest first: a folder may include itself and every folder before it in this list.
set(_layers base layout topology collectives step serving planner)
# Folders beside the layers: what each may include besides itself. report writes what step gives
# (the planner's own report, planner/planreport, uses report's shared formatting).
set(_side_report base layout topology collectives step serving)
set(_side_lesson base layout topology collectives step)
set(_side_import base layout topology collectives step serving planner)
# faults prices what-ifs on top of the step and of serving (sweeps, recovery) and writes their
# reports.
set(_side_faults base layout topology collectives step serving planner report)

# Beyond its layers, a layer may also include these side folders.
set(_extra_planner report)

function(_allowed folder out)
    list(FIND _layers ${folder} idx)
    if(idx GREATER_EQUAL 0)
        math(EXPR last "${idx}")
        set(list "")
        foreach(i RANGE 0 ${last})
            list(GET _layers ${i} f)
            list(APPEND list ${f})
        endforeach()
        if(DEFINED _extra_${folder})
            list(APPEND list ${_extra_${folder}})
        endif()
        set(${out} ${list} PARENT_SCOPE)
    elseif(DEFINED _side_${folder})
        set(${out} ${_side_${folder}} ${folder} PARENT_SCOPE)
    else()
        set(${out} "<unknown>" PARENT_SCOPE)
    endif()
endfunction()

if(NOT ENGINE_DIR OR NOT IS_DIRECTORY "${ENGINE_DIR}")
    message(FATAL_ERROR "CheckEngineIncludes: ENGINE_DIR '${ENGINE_DIR}' is not a folder")
endif()

get_filename_component(ENGINE_DIR "${ENGINE_DIR}" ABSOLUTE)
set(_known ${_layers} report lesson import faults)
file(GLOB _folders LIST_DIRECTORIES true RELATIVE "${ENGINE_DIR}" "${ENGINE_DIR}/*")
set(_topics "")
foreach(f IN LISTS _folders)
    if(IS_DIRECTORY "${ENGINE_DIR}/${f}")
        list(APPEND _topics ${f})
    endif()
endforeach()

set(_violations "")
# Sources straight in ENGINE_DIR: every engine file belongs to a topic folder.
file(GLOB _loose RELATIVE "${ENGINE_DIR}" "${ENGINE_DIR}/*.h" "${ENGINE_DIR}/*.cpp")
foreach(f IN LISTS _loose)
    list(APPEND _violations "${f}: a source outside the topic folders (move it into one of: ${_known})")
endforeach()

# Every engine header's file name, to catch a folder-less include of one.
file(GLOB_RECURSE _headers RELATIVE "${ENGINE_DIR}" "${ENGINE_DIR}/*.h")
set(_header_names "")
foreach(h IN LISTS _headers)
    get_filename_component(n "${h}" NAME)
    list(APPEND _header_names "${n}")
endforeach()

set(_matrix "")
foreach(folder IN LISTS _topics)
    if(NOT folder IN_LIST _known)
        list(APPEND _violations
             "${folder}/: a folder the include rule does not know (add its row to cmake/CheckEngineIncludes.cmake)")
        continue()
    endif()
    _allowed(${folder} allowed)
    string(REPLACE ";" " " allowed_s "${allowed}")
    set(used "")
    file(GLOB_RECURSE files "${ENGINE_DIR}/${folder}/*.h" "${ENGINE_DIR}/${folder}/*.cpp")
    foreach(path IN LISTS files)
        file(RELATIVE_PATH rel "${ENGINE_DIR}" "${path}")
        file(STRINGS "${path}" lines REGEX "^[ \t]*#[ \t]*include")
        # file(STRINGS) drops line numbers: find them by reading the file once more.
        file(STRINGS "${path}" all)
        foreach(line IN LISTS lines)
            set(target "")
            if(line MATCHES "#[ \t]*include[ \t]*\"([^\"]+)\"")
                set(target "${CMAKE_MATCH_1}")
                set(form quoted)
            elseif(line MATCHES "#[ \t]*include[ \t]*<([^>]+)>")
                set(target "${CMAKE_MATCH_1}")
                set(form angled)
            else()
                continue()
            endif()
            list(FIND all "${line}" lineno)
            math(EXPR lineno "${lineno} + 1")
            if(target MATCHES "^Q[A-Za-z]*(/|$)" OR target MATCHES "^qt")
                list(APPEND _violations "${rel}:${lineno}: includes <${target}>: the engine is Qt-free")
                continue()
            endif()
            if(form STREQUAL angled)
                continue()
            endif()
            if(target MATCHES "^([a-z_]+)/")
                set(to "${CMAKE_MATCH_1}")
                if(NOT to IN_LIST _topics)
                    continue() # not an engine folder (generated headers, third-party)
                endif()
                if(NOT to IN_LIST allowed)
                    list(APPEND _violations
                         "${rel}:${lineno}: includes \"${target}\", but ${folder}/ may include only: ${allowed_s}")
                endif()
                if(NOT to IN_LIST used)
                    list(APPEND used ${to})
                endif()
            elseif(target IN_LIST _header_names)
                list(APPEND _violations
                     "${rel}:${lineno}: includes \"${target}\" without its folder (write it as folder/${target})")
            endif()
        endforeach()
    endforeach()
    list(SORT used)
    list(REMOVE_ITEM used ${folder})
    string(REPLACE ";" " " used_s "${used}")
    string(APPEND _matrix "  ${folder}/ includes: ${used_s}\n      may include: ${allowed_s}\n")
endforeach()

if(PRINT_MATRIX)
    message(STATUS "Engine include matrix (${ENGINE_DIR}):\n${_matrix}")
endif()

list(LENGTH _violations n)
if(n GREATER 0)
    string(REPLACE ";" "\n  " text "${_violations}")
    message("Engine include rule: ${n} violation(s):\n  ${text}")
    # FATAL_ERROR would add a CMake backtrace that hides the list; exit 1 the plain way.
    message(FATAL_ERROR "Engine include rule violated (see cmake/CheckEngineIncludes.cmake)")
endif()

if(STAMP)
    file(WRITE "${STAMP}" "ok\n")
endif()
