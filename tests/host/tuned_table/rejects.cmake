# cmake -DFIXTURE=<good table> -DMEMBER=<a.0.b> -DVALUE=<JSON> -DWORK=<dir> -P rejects.cmake
#
# Sets one member of a good tuned table to VALUE (JSON text), writes the
# result to WORK/broken.json and runs the library's table generator on it
# (cmake/tuned_table.cmake), which must stop naming the file and the member.
# The ctest entries (tests/CMakeLists.txt) match its message.
cmake_minimum_required(VERSION 3.25)
get_filename_component(PROJECT_SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
include("${PROJECT_SOURCE_DIR}/cmake/tuned_table.cmake")
file(READ "${FIXTURE}" json)
string(REPLACE "." ";" path "${MEMBER}")
string(JSON json SET "${json}" ${path} "${VALUE}")
file(MAKE_DIRECTORY "${WORK}")
file(WRITE "${WORK}/broken.json" "${json}")
tcgemm_tuned_table(OUTPUT "${WORK}/broken.cpp" FUNCTION broken_table FILES "${WORK}/broken.json")
message(FATAL_ERROR "the generator accepted ${MEMBER} = ${VALUE}")
