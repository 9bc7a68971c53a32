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

# _tcgemm_tuned_flag(<out var> <json> <path>...): an optional boolean member as
# a C++ literal, false when the member is absent.
function(_tcgemm_tuned_flag out json)
  string(JSON value ERROR_VARIABLE error GET "${json}" ${ARGN})
  if(error OR NOT value)
    set(${out} false PARENT_SCOPE)
  else()
    set(${out} true PARENT_SCOPE)
  endif()
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
  set(dtypes bf16 DType::kBF16 fp16 DType::kFP16 fp32 DType::kFP32)
  set(paths tma prod::OperandPath::kTma repack prod::OperandPath::kRepack)
  set(epilogues tma_store prod::EpiloguePath::kTmaStore direct prod::EpiloguePath::kDirect)

  set(rows "")
  set(count 0)
  set(sources "")
  foreach(file IN LISTS arg_FILES)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${file}")
    file(RELATIVE_PATH shown "${PROJECT_SOURCE_DIR}" "${file}")
    string(APPEND sources "//   ${shown}\n")
    file(READ "${file}" json)
    _tcgemm_tuned_get(format "${file}" "${json}" format)
    _tcgemm_tuned_get(version "${file}" "${json}" format_version)
    if(NOT format STREQUAL TCGEMM_TUNED_FORMAT OR NOT version EQUAL TCGEMM_TUNED_FORMAT_VERSION)
      message(FATAL_ERROR "${file}: not a ${TCGEMM_TUNED_FORMAT} file of format version "
                          "${TCGEMM_TUNED_FORMAT_VERSION} (format '${format}', version '${version}')")
    endif()
    _tcgemm_tuned_get(device "${file}" "${json}" gpu name)
    string(REPLACE "\\" "\\\\" device "${device}")
    string(REPLACE "\"" "\\\"" device "${device}")
    string(JSON shape_count ERROR_VARIABLE error LENGTH "${json}" shapes)
    if(error)
      message(FATAL_ERROR "${file}: tuned table member 'shapes': ${error}")
    endif()
    if(shape_count EQUAL 0)
      continue()
    endif()
    math(EXPR last "${shape_count} - 1")
    foreach(i RANGE 0 ${last})
      string(JSON tuned_type ERROR_VARIABLE error TYPE "${json}" shapes ${i} tuned)
      if(error)
        message(FATAL_ERROR "${file}: tuned table member 'shapes.${i}.tuned': ${error}")
      endif()
      if(tuned_type STREQUAL "NULL")
        continue()
      endif()
      foreach(field m n k batch dtype out_dtype layout a_path b_path epilogue)
        _tcgemm_tuned_get(${field} "${file}" "${json}" shapes ${i} ${field})
      endforeach()
      _tcgemm_tuned_get(config "${file}" "${json}" shapes ${i} tuned config)
      _tcgemm_tuned_get(k_splits "${file}" "${json}" shapes ${i} tuned k_splits)
      # split_tail, flipped: absent from files written before they existed.
      _tcgemm_tuned_flag(split_tail "${json}" shapes ${i} tuned split_tail)
      _tcgemm_tuned_flag(flipped "${json}" shapes ${i} tuned flipped)
      _tcgemm_tuned_enum(in_cpp "${file}" dtype "${dtype}" ${dtypes})
      _tcgemm_tuned_enum(out_cpp "${file}" out_dtype "${out_dtype}" ${dtypes})
      _tcgemm_tuned_layouts(a_cpp b_cpp c_cpp "${file}" "${layout}")
      _tcgemm_tuned_enum(a_path_cpp "${file}" a_path "${a_path}" ${paths})
      _tcgemm_tuned_enum(b_path_cpp "${file}" b_path "${b_path}" ${paths})
      _tcgemm_tuned_enum(epilogue_cpp "${file}" epilogue "${epilogue}" ${epilogues})
      string(REPLACE "\"" "\\\"" config "${config}")
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
