# Finds what the Python package needs: Python's headers and pybind11. Debian's interpreter is
# preferred (/usr/bin/python3: where python3-numpy, python3-pytest and python3-torch install),
# whatever python3 comes first on PATH; pass -DPython_EXECUTABLE=... to build for another.
# Sets SIMPREC_HAVE_PYTHON.
set(SIMPREC_HAVE_PYTHON OFF)
if(SIMPREC_PYTHON)
  if(NOT Python_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "the interpreter the Python package is for")
  endif()
  find_package(Python 3.9 QUIET COMPONENTS Interpreter Development.Module)
  if(Python_FOUND)
    # A pybind11 installed into that interpreter (pip) tells where its CMake files are. Also
    # where the folder found before is gone: pip's build environment of an earlier pip install.
    execute_process(COMMAND ${Python_EXECUTABLE} -c "import pybind11; print(pybind11.get_cmake_dir())"
                    OUTPUT_VARIABLE SIMPREC_PIP_PYBIND11_DIR OUTPUT_STRIP_TRAILING_WHITESPACE
                    ERROR_QUIET RESULT_VARIABLE SIMPREC_PIP_PYBIND11_MISSING)
    if(NOT SIMPREC_PIP_PYBIND11_MISSING AND (NOT pybind11_DIR OR NOT EXISTS "${pybind11_DIR}"))
      set(pybind11_DIR ${SIMPREC_PIP_PYBIND11_DIR})
    endif()
    find_package(pybind11 2.6 CONFIG QUIET)
  endif()
  if(Python_FOUND AND pybind11_FOUND)
    set(SIMPREC_HAVE_PYTHON ON)
  endif()
endif()
message(STATUS "simprec: Python package ${SIMPREC_HAVE_PYTHON} (${Python_EXECUTABLE})")
