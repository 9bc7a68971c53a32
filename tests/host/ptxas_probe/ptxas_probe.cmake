# The build's ptxas resource report for the WMMA probe kernel, which
# test_plan.cpp parses ("Used N registers", "N bytes smem") to check the
# planner's figures. Included from tests/CMakeLists.txt after
# tcgemm_host_tests is defined. To report another kernel file, add another
# tcgemm_ptxas_report() call and read its file in a test.
function(tcgemm_ptxas_report name source out_var)
  # Further arguments: files the source includes (Ninja cannot scan for them).
  set(report ${CMAKE_CURRENT_BINARY_DIR}/ptxas/${name}.txt)
  set(script ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/ptxas_report.cmake)
  add_custom_command(
    OUTPUT ${report}
    COMMAND ${CMAKE_COMMAND}
            -DNVCC=${CMAKE_CUDA_COMPILER}
            -DSOURCE=${source}
            -DOUTPUT=${report}
            -DCUBIN=${CMAKE_CURRENT_BINARY_DIR}/ptxas/${name}.cubin
            -DGENCODE=${TCGEMM_CUDA_GENCODE}
            -DSTD=c++20
            -P ${script}
    DEPENDS ${source} ${script} ${ARGN}
    COMMENT "ptxas resource report: ${name}"
    VERBATIM)
  add_custom_target(tcgemm_ptxas_${name} DEPENDS ${report})
  set(${out_var} ${report} PARENT_SCOPE)
endfunction()

tcgemm_ptxas_report(wmma_probe ${CMAKE_CURRENT_LIST_DIR}/wmma_probe.cu TCGEMM_PROBE_REPORT
    ${CMAKE_CURRENT_LIST_DIR}/probe_config.h)
add_dependencies(tcgemm_host_tests tcgemm_ptxas_wmma_probe)
file(RELATIVE_PATH TCGEMM_PROBE_REPORT_NAME ${TCGEMM_TEST_OUTPUT_DIR} ${TCGEMM_PROBE_REPORT})
target_compile_definitions(tcgemm_host_tests PRIVATE
    TCGEMM_PTXAS_PROBE_REPORT="${TCGEMM_PROBE_REPORT}"
    TCGEMM_PTXAS_PROBE_REPORT_NAME="${TCGEMM_PROBE_REPORT_NAME}")
