# FindCUDNN: cuDNN (headers + library) and the header-only cudnn_frontend.
#
# cuDNN is searched, first pair wins, where a header and a library lie side by side:
#   1. CUDNN_ROOT (cache variable or environment): include/, lib64/, lib/, lib/<multiarch>/
#   2. the CUDA toolkit (CUDAToolkit_INCLUDE_DIRS, CUDAToolkit_LIBRARY_DIR): the tarball layout
#   3. the multiarch folders of Debian/Ubuntu packages: /usr/include/<multiarch> with
#      /usr/lib/<multiarch> (NVIDIA's libcudnn9-dev-cuda-* packages)
#   4. /usr/include with /usr/lib/<multiarch>, /usr/lib64, /usr/lib
# Headers are cudnn.h + cudnn_version.h, or the packages' versioned names cudnn_v9.h +
# cudnn_version_v9.h (their unversioned names are update-alternatives links that may be missing);
# for the latter a folder of forwarding headers is written under the build tree. The library is
# libcudnn.so, or libcudnn.so.9 where no development link is installed.
#
# cudnn_frontend (header-only, cudnn_frontend.h) is searched in CUDNN_FRONTEND_INCLUDE_DIR, then
# <repository>/.deps/cudnn-frontend/include (filled by scripts/deps.sh from the
# nvidia-cudnn-frontend wheel), then the default include paths.
#
# Results:
#   CUDNN_FOUND, CUDNN_VERSION (e.g. 9.14.0), CUDNN_INCLUDE_DIR, CUDNN_LIBRARY
#   CUDNN_COMPILE_INCLUDE_DIR  the folder to compile with (CUDNN_INCLUDE_DIR, or the forwarding
#                    headers); put it first (target_include_directories(... BEFORE ...)) where the
#                    CUDA toolkit's include folder, on every CUDA user's path, may hold another cuDNN
#   CUDNN_FRONTEND_FOUND, CUDNN_FRONTEND_VERSION, CUDNN_FRONTEND_INCLUDE_DIR
#   CUDNN::cudnn     imported shared library (headers included); both targets are GLOBAL, as
#                    a static library that links them privately hands them on to its users
#   CUDNN::frontend  interface target: cudnn_frontend headers (as system headers, JSON support off)
#                    + CUDNN::cudnn + CUDA::cudart + CUDA::nvrtc

include(FindPackageHandleStandardArgs)

if(NOT CUDAToolkit_FOUND AND NOT TARGET CUDA::cudart)
  find_package(CUDAToolkit QUIET)
endif()

set(CUDNN_ROOT "$ENV{CUDNN_ROOT}" CACHE PATH "Where cuDNN is installed (include/ and lib/ or lib64/)")
set(_cudnn_multiarch "${CMAKE_LIBRARY_ARCHITECTURE}")
if(NOT _cudnn_multiarch)
  set(_cudnn_multiarch "x86_64-linux-gnu")
endif()

# Candidates: "include dir|lib dir,lib dir,...", in order of preference.
set(_cudnn_candidates)
if(CUDNN_ROOT)
  list(APPEND _cudnn_candidates
       "${CUDNN_ROOT}/include|${CUDNN_ROOT}/lib64,${CUDNN_ROOT}/lib,${CUDNN_ROOT}/lib/${_cudnn_multiarch}")
endif()
foreach(_inc IN LISTS CUDAToolkit_INCLUDE_DIRS)
  list(APPEND _cudnn_candidates "${_inc}|${CUDAToolkit_LIBRARY_DIR}")
endforeach()
if(CUDAToolkit_LIBRARY_ROOT)
  list(APPEND _cudnn_candidates "${CUDAToolkit_LIBRARY_ROOT}/include|${CUDAToolkit_LIBRARY_ROOT}/lib64")
endif()
list(APPEND _cudnn_candidates
     "/usr/include/${_cudnn_multiarch}|/usr/lib/${_cudnn_multiarch}"
     "/usr/include|/usr/lib/${_cudnn_multiarch},/usr/lib64,/usr/lib")

# A changed CUDNN_ROOT searches again.
if(DEFINED _CUDNN_ROOT_SEARCHED AND NOT _CUDNN_ROOT_SEARCHED STREQUAL CUDNN_ROOT)
  unset(CUDNN_INCLUDE_DIR CACHE)
  unset(CUDNN_LIBRARY CACHE)
endif()
set(_CUDNN_ROOT_SEARCHED "${CUDNN_ROOT}" CACHE INTERNAL "CUDNN_ROOT of the last search")

if(NOT CUDNN_INCLUDE_DIR OR NOT CUDNN_LIBRARY)
  unset(_cudnn_found_inc)
  foreach(_candidate IN LISTS _cudnn_candidates)
    string(REPLACE "|" ";" _parts "${_candidate}")
    list(GET _parts 0 _inc)
    list(GET _parts 1 _libs)
    string(REPLACE "," ";" _libs "${_libs}")
    if(NOT (EXISTS "${_inc}/cudnn.h" AND EXISTS "${_inc}/cudnn_version.h") AND
       NOT (EXISTS "${_inc}/cudnn_v9.h" AND EXISTS "${_inc}/cudnn_version_v9.h"))
      continue()
    endif()
    foreach(_lib_dir IN LISTS _libs)
      foreach(_name libcudnn.so libcudnn.so.9)
        if(EXISTS "${_lib_dir}/${_name}")
          set(_cudnn_found_inc "${_inc}")
          set(_cudnn_found_lib "${_lib_dir}/${_name}")
          break()
        endif()
      endforeach()
      if(DEFINED _cudnn_found_inc)
        break()
      endif()
    endforeach()
    if(DEFINED _cudnn_found_inc)
      break()
    endif()
  endforeach()
  if(DEFINED _cudnn_found_inc)
    set(CUDNN_INCLUDE_DIR "${_cudnn_found_inc}" CACHE PATH "cuDNN headers" FORCE)
    set(CUDNN_LIBRARY "${_cudnn_found_lib}" CACHE FILEPATH "cuDNN library (libcudnn.so[.9])" FORCE)
  endif()
endif()

set(CUDNN_VERSION "")
set(_cudnn_compile_include "")
if(CUDNN_INCLUDE_DIR)
  if(EXISTS "${CUDNN_INCLUDE_DIR}/cudnn_version.h")
    set(_cudnn_version_header "${CUDNN_INCLUDE_DIR}/cudnn_version.h")
    set(_cudnn_compile_include "${CUDNN_INCLUDE_DIR}")
  else()
    set(_cudnn_version_header "${CUDNN_INCLUDE_DIR}/cudnn_version_v9.h")
    # Only versioned names: forwarding headers under the unversioned ones, so that <cudnn.h> and
    # cudnn_v9.h's own #include "cudnn_version.h" resolve.
    set(_cudnn_compile_include "${CMAKE_BINARY_DIR}/cudnn_forward_headers")
    file(MAKE_DIRECTORY "${_cudnn_compile_include}")
    file(GLOB _cudnn_versioned RELATIVE "${CUDNN_INCLUDE_DIR}" "${CUDNN_INCLUDE_DIR}/cudnn*_v9.h")
    foreach(_header IN LISTS _cudnn_versioned)
      string(REPLACE "_v9.h" ".h" _plain "${_header}")
      file(CONFIGURE OUTPUT "${_cudnn_compile_include}/${_plain}"
           CONTENT "// Generated by FindCUDNN.cmake\n#include \"${CUDNN_INCLUDE_DIR}/${_header}\"\n")
    endforeach()
  endif()
  if(EXISTS "${_cudnn_version_header}")
    file(STRINGS "${_cudnn_version_header}" _cudnn_defines REGEX "^#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) +[0-9]+")
    foreach(_part MAJOR MINOR PATCHLEVEL)
      string(REGEX MATCH "CUDNN_${_part} +([0-9]+)" _match "${_cudnn_defines}")
      set(_cudnn_${_part} "${CMAKE_MATCH_1}")
    endforeach()
    if(NOT _cudnn_MAJOR STREQUAL "")
      set(CUDNN_VERSION "${_cudnn_MAJOR}.${_cudnn_MINOR}.${_cudnn_PATCHLEVEL}")
    endif()
  endif()
endif()

# A minimum version comes from the caller: find_package(CUDNN 9.0).
find_package_handle_standard_args(CUDNN
  REQUIRED_VARS CUDNN_LIBRARY CUDNN_INCLUDE_DIR
  VERSION_VAR CUDNN_VERSION)

set(CUDNN_COMPILE_INCLUDE_DIR "${_cudnn_compile_include}")

if(CUDNN_FOUND AND NOT TARGET CUDNN::cudnn)
  add_library(CUDNN::cudnn SHARED IMPORTED GLOBAL)
  set_target_properties(CUDNN::cudnn PROPERTIES
    IMPORTED_LOCATION "${CUDNN_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${_cudnn_compile_include}")
  if(TARGET CUDA::cudart)
    set_property(TARGET CUDNN::cudnn APPEND PROPERTY INTERFACE_LINK_LIBRARIES CUDA::cudart)
  endif()
endif()

# --- cudnn_frontend --------------------------------------------------------------------------------
get_filename_component(_cudnn_repo_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
find_path(CUDNN_FRONTEND_INCLUDE_DIR cudnn_frontend.h
  HINTS "${_cudnn_repo_root}/.deps/cudnn-frontend/include"
  DOC "cudnn_frontend headers (cudnn_frontend.h)")
set(CUDNN_FRONTEND_VERSION "")
if(CUDNN_FRONTEND_INCLUDE_DIR AND EXISTS "${CUDNN_FRONTEND_INCLUDE_DIR}/cudnn_frontend_version.h")
  file(STRINGS "${CUDNN_FRONTEND_INCLUDE_DIR}/cudnn_frontend_version.h" _fe_defines
       REGEX "^#define CUDNN_FRONTEND_(MAJOR|MINOR|PATCH)_VERSION +[0-9]+")
  foreach(_part MAJOR MINOR PATCH)
    string(REGEX MATCH "CUDNN_FRONTEND_${_part}_VERSION +([0-9]+)" _match "${_fe_defines}")
    set(_fe_${_part} "${CMAKE_MATCH_1}")
  endforeach()
  set(CUDNN_FRONTEND_VERSION "${_fe_MAJOR}.${_fe_MINOR}.${_fe_PATCH}")
endif()
set(CUDNN_FRONTEND_FOUND FALSE)
if(CUDNN_FOUND AND CUDNN_FRONTEND_INCLUDE_DIR AND CUDNN_FRONTEND_VERSION)
  set(CUDNN_FRONTEND_FOUND TRUE)
  if(NOT TARGET CUDNN::frontend)
    add_library(CUDNN::frontend INTERFACE IMPORTED GLOBAL)
    # IMPORTED include directories are system includes: the frontend's warnings stay out of the log.
    set_target_properties(CUDNN::frontend PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${CUDNN_FRONTEND_INCLUDE_DIR}"
      # No JSON (graph serialisation) in kbench: keeps the frontend's bundled nlohmann_json out of
      # the binary, which links Debian's nlohmann_json elsewhere.
      INTERFACE_COMPILE_DEFINITIONS "CUDNN_FRONTEND_SKIP_JSON_LIB"
      INTERFACE_LINK_LIBRARIES "CUDNN::cudnn")
    # Recent frontends (1.2x+) compile NVRTC calls into every user, for their runtime-compiled
    # engines; NVRTC ships with the CUDA toolkit.
    if(TARGET CUDA::nvrtc)
      set_property(TARGET CUDNN::frontend APPEND PROPERTY INTERFACE_LINK_LIBRARIES CUDA::nvrtc)
    endif()
  endif()
endif()

if(NOT CUDNN_FIND_QUIETLY)
  if(CUDNN_FOUND AND NOT CUDNN_FRONTEND_FOUND)
    message(STATUS "cudnn_frontend headers not found (run scripts/deps.sh, or set CUDNN_FRONTEND_INCLUDE_DIR)")
  elseif(CUDNN_FRONTEND_FOUND)
    message(STATUS "Found cudnn_frontend ${CUDNN_FRONTEND_VERSION}: ${CUDNN_FRONTEND_INCLUDE_DIR}")
  endif()
endif()

mark_as_advanced(CUDNN_INCLUDE_DIR CUDNN_LIBRARY CUDNN_FRONTEND_INCLUDE_DIR)
