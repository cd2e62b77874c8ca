# Make the CMake exports of the ROS 2 pip wheels usable on this machine.
#
# Use: cmake -DCMAKE_PROJECT_INCLUDE=<this file> ...   (or colcon build --cmake-args ...)
#
# The wheels' exported `*__rosidl_generator_py` targets list the include directories of the
# machine they were built on (/opt/python/cp311-cp311/include/python3.11 and its NumPy headers).
# CMake refuses to generate a build that uses an imported target with a non-existent include
# directory, and no option turns that check off. So, once all find_package() calls of the
# project have run, this file
#   1. drops non-existent INTERFACE_INCLUDE_DIRECTORIES entries of every imported target,
#   2. gives every `*__rosidl_generator_py` target this interpreter's Python and NumPy headers,
#   3. keeps the interpreter's include directories out of the project's own exported
#      `*__rosidl_generator_py` target when they lie in the source tree (a venv inside it).
# On a regular ROS install all paths exist and steps 1 and 3 change nothing.
#
# CMAKE_PROJECT_INCLUDE is read at project(), before any find_package(), so the work is deferred
# to the end of the top-level CMakeLists.txt (still before generation, where the check happens).

include_guard(GLOBAL)
if(CMAKE_VERSION VERSION_LESS 3.21)  # cmake_language(DEFER), IMPORTED_TARGETS
  message(FATAL_ERROR "pip_wheels_fix.cmake needs CMake >= 3.21, found ${CMAKE_VERSION}")
endif()

function(_pip_wheels_fix_targets)
  get_directory_property(_targets DIRECTORY "${CMAKE_SOURCE_DIR}" IMPORTED_TARGETS)

  set(_python_includes "")
  foreach(_target IN LISTS _targets)
    if(_target MATCHES "__rosidl_generator_py$")
      if(NOT DEFINED Python3_NumPy_INCLUDE_DIRS)
        find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Module NumPy)
      endif()
      set(_python_includes ${Python3_INCLUDE_DIRS} ${Python3_NumPy_INCLUDE_DIRS})
      break()
    endif()
  endforeach()

  # 1. and 2.
  foreach(_target IN LISTS _targets)
    get_target_property(_includes ${_target} INTERFACE_INCLUDE_DIRECTORIES)
    if(NOT _includes)
      set(_includes "")
    endif()
    set(_kept "")
    foreach(_dir IN LISTS _includes)
      # Generator expressions cannot be checked here; keep them.
      if(_dir MATCHES "\\$<" OR EXISTS "${_dir}")
        list(APPEND _kept "${_dir}")
      endif()
    endforeach()
    if(_target MATCHES "__rosidl_generator_py$")
      list(APPEND _kept ${_python_includes})
    endif()
    list(REMOVE_DUPLICATES _kept)
    if(NOT "${_kept}" STREQUAL "${_includes}")
      set_target_properties(${_target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_kept}")
    endif()
  endforeach()

  # 3. The project's own `*__rosidl_generator_py` target exports the interpreter's include
  #    directories. With the venv inside the source tree (our .venv), CMake rejects that export
  #    ("prefixed in the source directory"). They are only needed to build, so such entries are
  #    limited to the build interface.
  get_directory_property(_own_targets DIRECTORY "${CMAKE_SOURCE_DIR}" BUILDSYSTEM_TARGETS)
  foreach(_target IN LISTS _own_targets)
    if(NOT _target MATCHES "__rosidl_generator_py$")
      continue()
    endif()
    get_target_property(_includes ${_target} INTERFACE_INCLUDE_DIRECTORIES)
    if(NOT _includes)
      continue()
    endif()
    set(_wrapped "")
    foreach(_dir IN LISTS _includes)
      string(FIND "${_dir}" "${CMAKE_SOURCE_DIR}/" _pos)
      if(_pos EQUAL 0)
        set(_dir "$<BUILD_INTERFACE:${_dir}>")
      endif()
      list(APPEND _wrapped "${_dir}")
    endforeach()
    set_target_properties(${_target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_wrapped}")
  endforeach()
endfunction()

cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _pip_wheels_fix_targets)
