# Run as `cmake -P`: compile one CUDA source to a cubin with ptxas's resource
# report (-Xptxas -v) and write the compiler's output to a text file.
#   -DNVCC=... -DSOURCE=... -DOUTPUT=... -DCUBIN=... -DGENCODE=... -DSTD=...
execute_process(
  COMMAND "${NVCC}" -cubin "${GENCODE}" "-std=${STD}"
          -Xptxas=-v,-warn-spills,-warn-lmem-usage --Werror=all-warnings
          -Wno-deprecated-gpu-targets -o "${CUBIN}" "${SOURCE}"
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ptxas report for ${SOURCE} failed (${rc}):\n${out}${err}")
endif()
file(WRITE "${OUTPUT}" "${out}${err}")
