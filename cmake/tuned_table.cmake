# tcgemm_tuned_table(OUTPUT <file.cpp> FUNCTION <name> [FILES <json>...])
#
# Reads tuned-table files that tcgemm-tune wrote (docs/tuning.md, "The
# table's format") at configure time with CMake's own JSON parser and writes
# OUTPUT, a C++ source defining
#
#   std::span<const tcgemm::tuned::Entry> tcgemm::tuned::<name>();
#
# over a constexpr array of their entries, sorted by key at compile time
# (src/tuned/tuned.h). The library thus embeds the table without a JSON
# dependency at build or run time. Shapes with no verified choice ("tuned":
# null) are left out; no FILES gives an empty table. Each file becomes a
# configure dependency, so editing one regenerates OUTPUT; OUTPUT is
# rewritten only when its text changes. A file that is not a tuned table of
# format version 1, or a field with a value the format does not define, stops
# the configure step with the file's name.

set(TCGEMM_TUNED_FORMAT "tcgemm-tuned-table")
set(TCGEMM_TUNED_FORMAT_VERSION 1)

# _tcgemm_tuned_get(<out var> <file> <json> <path>...): string(JSON GET) that
# names the file and the path when the member is missing.
function(_tcgemm_tuned_get out file json)
  string(JSON value ERROR_VARIABLE error GET "${json}" ${ARGN})
  if(error)
    list(JOIN ARGN "." where)
    message(FATAL_ERROR "${file}: tuned table member '${where}': ${error}")
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

# _tcgemm_tuned_type(<file> <where> <json> <type> <path>...): stops unless
# the member at <path> of <json> (itself the member <where> of the file, ""
# for the whole file) has the JSON type <type> (STRING, NUMBER, OBJECT, ...).
function(_tcgemm_tuned_type file where json type)
  list(JOIN ARGN "." member)
  if(NOT where STREQUAL "")
    set(member "${where}.${member}")
  endif()
  string(JSON actual ERROR_VARIABLE error TYPE "${json}" ${ARGN})
  if(error)
    message(FATAL_ERROR "${file}: tuned table member '${member}': ${error}")
  endif()
  if(NOT actual STREQUAL type)
    message(FATAL_ERROR "${file}: tuned table member '${member}' is ${actual}, not ${type}")
  endif()
endfunction()

# _tcgemm_tuned_count(<out var> <file> <where> <json> <member> <max>): an
# integer member in [1, <max>] (<max> below 2^53, where JSON numbers stay
# exact), written as plain digits.
function(_tcgemm_tuned_count out file where json member max)
  _tcgemm_tuned_type("${file}" "${where}" "${json}" NUMBER ${member})
  string(JSON value GET "${json}" ${member})
  if(NOT value MATCHES "^[0-9]+$" OR value MATCHES "^0" OR value GREATER ${max})
    message(FATAL_ERROR "${file}: tuned table member '${where}.${member}' is ${value}, not an "
                        "integer from 1 to ${max}")
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

# _tcgemm_tuned_flag(<out var> <file> <where> <json> <member>): an optional
# boolean member as a C++ literal, false when the member is absent.
function(_tcgemm_tuned_flag out file where json member)
  string(JSON type ERROR_VARIABLE error TYPE "${json}" ${member})
  if(error)
    set(${out} false PARENT_SCOPE)
    return()
  endif()
  if(NOT type STREQUAL "BOOLEAN")
    message(FATAL_ERROR "${file}: tuned table member '${where}.${member}' is ${type}, not "
                        "BOOLEAN (true or false, or absent)")
  endif()
  string(JSON value GET "${json}" ${member})
  if(value)
    set(${out} true PARENT_SCOPE)
  else()
    set(${out} false PARENT_SCOPE)
  endif()
endfunction()

# _tcgemm_tuned_name(<out var> <file> <where> <value> <pattern>): <value>
# unless it does not match <pattern> (what a C++ string literal of it may
# hold without escapes).
function(_tcgemm_tuned_name out file where value pattern)
  if(NOT value MATCHES "${pattern}")
    message(FATAL_ERROR "${file}: tuned table member '${where}' is '${value}', which is not "
                        "a name of the form ${pattern}")
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

# _tcgemm_tuned_enum(<out var> <file> <what> <value> <name> <C++>...): the C++
# enumerator of <value> among the name/C++ pairs.
function(_tcgemm_tuned_enum out file what value)
  set(pairs ${ARGN})
  list(LENGTH pairs count)
  math(EXPR last "${count} - 1")
  foreach(i RANGE 0 ${last} 2)
    math(EXPR j "${i} + 1")
    list(GET pairs ${i} name)
    list(GET pairs ${j} cpp)
    if(value STREQUAL name)
      set(${out} "${cpp}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "${file}: ${what} '${value}' is not one the tuned table format defines")
endfunction()

# _tcgemm_tuned_layouts(<a> <b> <c> <file> <name>): the layouts of a
# tcgemm-bench layout name: two letters for A and B (t = row-major, n =
# column-major), an optional third for C (r = row-major, c = column-major).
function(_tcgemm_tuned_layouts a_out b_out c_out file name)
  string(LENGTH "${name}" length)
  if(NOT (length EQUAL 2 OR length EQUAL 3))
    message(FATAL_ERROR "${file}: layout '${name}' is not a layout name (tn, nn, nt, tt, tnr, ...)")
  endif()
  set(row "Layout::kRowMajor")
  set(col "Layout::kColMajor")
  string(SUBSTRING "${name}" 0 1 a)
  string(SUBSTRING "${name}" 1 1 b)
  set(c "c")
  if(length EQUAL 3)
    string(SUBSTRING "${name}" 2 1 c)
  endif()
  _tcgemm_tuned_enum(a_cpp "${file}" "layout letter of A" "${a}" t ${row} n ${col})
  _tcgemm_tuned_enum(b_cpp "${file}" "layout letter of B" "${b}" t ${row} n ${col})
  _tcgemm_tuned_enum(c_cpp "${file}" "layout letter of C" "${c}" r ${row} c ${col})
  set(${a_out} "${a_cpp}" PARENT_SCOPE)
  set(${b_out} "${b_cpp}" PARENT_SCOPE)
  set(${c_out} "${c_cpp}" PARENT_SCOPE)
endfunction()

function(tcgemm_tuned_table)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "OUTPUT;FUNCTION" "FILES")
  if(NOT arg_OUTPUT OR NOT arg_FUNCTION)
    message(FATAL_ERROR "tcgemm_tuned_table: OUTPUT and FUNCTION are required")
  endif()
  set(input_dtypes bf16 DType::kBF16 fp16 DType::kFP16)
  set(dtypes ${input_dtypes} fp32 DType::kFP32)
  set(paths tma prod::OperandPath::kTma repack prod::OperandPath::kRepack)
  set(epilogues tma_store prod::EpiloguePath::kTmaStore direct prod::EpiloguePath::kDirect)

  set(rows "")
  set(count 0)
  set(sources "")
  set(keys "")         # each entry's key, for duplicates
  set(key_origins "")  # and where it came from
  foreach(file IN LISTS arg_FILES)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${file}")
    file(RELATIVE_PATH shown "${PROJECT_SOURCE_DIR}" "${file}")
    string(APPEND sources "//   ${shown}\n")
    file(READ "${file}" json)
    _tcgemm_tuned_type("${file}" "" "${json}" STRING format)
    _tcgemm_tuned_type("${file}" "" "${json}" NUMBER format_version)
    _tcgemm_tuned_get(format "${file}" "${json}" format)
    _tcgemm_tuned_get(version "${file}" "${json}" format_version)
    if(NOT format STREQUAL TCGEMM_TUNED_FORMAT OR NOT version STREQUAL TCGEMM_TUNED_FORMAT_VERSION)
      message(FATAL_ERROR "${file}: not a ${TCGEMM_TUNED_FORMAT} file of format version "
                          "${TCGEMM_TUNED_FORMAT_VERSION} (format '${format}', version '${version}')")
    endif()
    _tcgemm_tuned_type("${file}" "" "${json}" STRING gpu name)
    _tcgemm_tuned_get(device "${file}" "${json}" gpu name)
    # cudaDeviceProp::name: printable ASCII, quotes and backslashes escaped.
    _tcgemm_tuned_name(device "${file}" gpu.name "${device}" "^[ -~]+$")
    string(REPLACE "\\" "\\\\" device "${device}")
    string(REPLACE "\"" "\\\"" device "${device}")
    # CMake would cut a string at a NUL: refuse it rather than read another name.
    if(json MATCHES "\\\\u0000")
      message(FATAL_ERROR "${file}: a string holds a NUL character (\\u0000)")
    endif()
    _tcgemm_tuned_type("${file}" "" "${json}" ARRAY shapes)
    _tcgemm_tuned_get(shapes "${file}" "${json}" shapes)
    string(JSON shape_count LENGTH "${shapes}")
    if(shape_count EQUAL 0)
      continue()
    endif()
    # Every string(JSON) call parses the whole text it is given, and each
    # entry is taken out of the shapes by one: the cost grows with entries x
    # text. The candidates' timings are most of the text and none of what is
    # read here, so their arrays (objects of plain values, as tcgemm-tune
    # writes them) are emptied first; a file where that would not leave the
    # same entries (a hand edit with a ']' in a string, say) is read whole.
    string(REGEX REPLACE "\"candidates\"[ \t\r\n]*:[ \t\r\n]*\\[[^]]*\\]" "\"candidates\": []"
           slim "${shapes}")
    string(JSON slim_count ERROR_VARIABLE error LENGTH "${slim}")
    if(NOT error AND slim_count EQUAL shape_count)
      set(shapes "${slim}")
    endif()
    math(EXPR last "${shape_count} - 1")
    foreach(i RANGE 0 ${last})
      set(where "shapes.${i}")
      string(JSON shape GET "${shapes}" ${i})
      string(JSON shape_type TYPE "${shape}")
      if(NOT shape_type STREQUAL "OBJECT")
        message(FATAL_ERROR "${file}: tuned table member '${where}' is ${shape_type}, not OBJECT")
      endif()
      string(JSON tuned_type ERROR_VARIABLE error TYPE "${shape}" tuned)
      if(error)
        message(FATAL_ERROR "${file}: tuned table member '${where}.tuned': ${error}")
      endif()
      if(tuned_type STREQUAL "NULL")
        continue()
      endif()
      _tcgemm_tuned_type("${file}" "${where}" "${shape}" OBJECT tuned)
      string(JSON tuned GET "${shape}" tuned)
      # M, N, K up to 2^31 - 1 (what tcgemm runs), as many batch entries.
      foreach(field m n k batch)
        _tcgemm_tuned_count(${field} "${file}" "${where}" "${shape}" ${field} 2147483647)
      endforeach()
      foreach(field dtype out_dtype layout a_path b_path epilogue)
        _tcgemm_tuned_type("${file}" "${where}" "${shape}" STRING ${field})
        string(JSON ${field} GET "${shape}" ${field})
      endforeach()
      _tcgemm_tuned_type("${file}" "${where}.tuned" "${tuned}" STRING config)
      string(JSON config GET "${tuned}" config)
      _tcgemm_tuned_name(config "${file}" "${where}.tuned.config" "${config}" "^[A-Za-z0-9_x-]+$")
      _tcgemm_tuned_count(k_splits "${file}" "${where}.tuned" "${tuned}" k_splits 65535)
      # The winner is what the library will run: only a verified one.
      _tcgemm_tuned_type("${file}" "${where}.tuned" "${tuned}" STRING status)
      string(JSON status GET "${tuned}" status)
      if(NOT status STREQUAL "ok")
        message(FATAL_ERROR "${file}: tuned table member '${where}.tuned.status' is '${status}': "
                            "a winner must have verified (\"ok\")")
      endif()
      # split_tail, flipped: absent from files written before they existed.
      _tcgemm_tuned_flag(split_tail "${file}" "${where}.tuned" "${tuned}" split_tail)
      _tcgemm_tuned_flag(flipped "${file}" "${where}.tuned" "${tuned}" flipped)
      _tcgemm_tuned_enum(in_cpp "${file}" dtype "${dtype}" ${input_dtypes})
      _tcgemm_tuned_enum(out_cpp "${file}" out_dtype "${out_dtype}" ${dtypes})
      _tcgemm_tuned_layouts(a_cpp b_cpp c_cpp "${file}" "${layout}")
      _tcgemm_tuned_enum(a_path_cpp "${file}" a_path "${a_path}" ${paths})
      _tcgemm_tuned_enum(b_path_cpp "${file}" b_path "${b_path}" ${paths})
      _tcgemm_tuned_enum(epilogue_cpp "${file}" epilogue "${epilogue}" ${epilogues})
      # The same problem twice for one GPU: name both (the static_assert in
      # the generated source would say only that there is a pair). The key
      # holds the parsed layouts, so that "tn" and "tnc" (C column-major
      # either way) are one.
      set(key "${device}|${dtype}|${out_dtype}|${a_cpp}|${b_cpp}|${c_cpp}|${a_path}|${b_path}|${epilogue}|${m}|${n}|${k}|${batch}")
      string(REPLACE ";" "," key "${key}")
      list(FIND keys "${key}" earlier)
      if(NOT earlier EQUAL -1)
        list(GET key_origins ${earlier} origin)
        message(FATAL_ERROR "${file}: tuned table member '${where}' is the same problem as "
                            "${origin} (${m}x${n}x${k}, batch ${batch}, ${dtype}->${out_dtype}, "
                            "${layout}, ${a_path}/${b_path}/${epilogue}) for the same GPU")
      endif()
      list(APPEND keys "${key}")
      list(APPEND key_origins "${shown}: ${where}")
      string(APPEND rows
             "    Entry{\"${device}\", ${in_cpp}, ${out_cpp}, ${a_cpp}, ${b_cpp}, ${c_cpp},\n"
             "          ${a_path_cpp}, ${b_path_cpp}, ${epilogue_cpp},\n"
             "          ${m}, ${n}, ${k}, ${batch}, \"${config}\", ${k_splits}, ${split_tail},\n"
             "          ${flipped}},\n")
      math(EXPR count "${count} + 1")
    endforeach()
  endforeach()
  if(sources STREQUAL "")
    set(sources "//   (none: an empty table)\n")
  endif()

  if(count EQUAL 0)
    set(array "std::array<Entry, 0>{}")
  else()
    set(array "sorted(std::array<Entry, ${count}>{{\n${rows}}})")
  endif()
  set(text
"// Generated at configure time by cmake/tuned_table.cmake from:
${sources}// Do not edit: edit (or re-tune) the JSON files instead.
#include \"tuned/tuned.h\"

namespace tcgemm::tuned {
namespace {

constexpr std::array<Entry, ${count}> kEntries = ${array};
static_assert(keys_unique(kEntries),
              \"two tuned-table entries share a key (the same problem on the same GPU)\");

}  // namespace

std::span<const Entry> ${arg_FUNCTION}() { return kEntries; }

}  // namespace tcgemm::tuned
")
  set(old "")
  if(EXISTS "${arg_OUTPUT}")
    file(READ "${arg_OUTPUT}" old)
  endif()
  if(NOT old STREQUAL text)
    file(WRITE "${arg_OUTPUT}" "${text}")
  endif()
endfunction()
