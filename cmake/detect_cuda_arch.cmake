# Picks the CUDA architecture of the GPU in this machine, or 90a (the H100/H200) when there is none.
set(_mmlab_arch 90a)
find_program(_mmlab_nvidia_smi nvidia-smi)
if(_mmlab_nvidia_smi)
  execute_process(COMMAND ${_mmlab_nvidia_smi} --query-gpu=compute_cap --format=csv,noheader
                  OUTPUT_VARIABLE _mmlab_cap RESULT_VARIABLE _mmlab_rc ERROR_QUIET
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(_mmlab_rc EQUAL 0 AND _mmlab_cap MATCHES "^([0-9]+)\\.([0-9]+)")
    set(_mmlab_arch "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
    if(_mmlab_arch STREQUAL "90")
      set(_mmlab_arch 90a)  # Hopper-only instructions need the arch-specific target
    endif()
  endif()
endif()
set(CMAKE_CUDA_ARCHITECTURES ${_mmlab_arch} CACHE STRING "CUDA architectures to build for")
message(STATUS "mmlab: building for CUDA architecture ${CMAKE_CUDA_ARCHITECTURES}")
