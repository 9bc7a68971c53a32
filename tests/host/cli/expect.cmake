# cmake -DCMD=<program|arg|...> -DEXPECT_RC=<n> -DEXPECT=<regex> [-DSTDOUT=<file>] -P expect.cmake
#
# Runs a command-line tool (its arguments separated by '|') and stops with an
# error unless it exits with EXPECT_RC and its standard error matches EXPECT.
# STDOUT sends its standard output to a file (/dev/full: a write that fails).
# The ctest entries (tests/CMakeLists.txt) check the tools' usage errors and
# exit codes this way, with no GPU.
cmake_minimum_required(VERSION 3.25)
string(REPLACE "|" ";" command "${CMD}")
if(DEFINED STDOUT)
  execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_FILE "${STDOUT}"
                  ERROR_VARIABLE err)
else()
  execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
endif()
if(NOT rc STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "exit status ${rc}, expected ${EXPECT_RC}; standard error:\n${err}")
endif()
if(NOT err MATCHES "${EXPECT}")
  message(FATAL_ERROR "standard error does not match '${EXPECT}':\n${err}")
endif()
