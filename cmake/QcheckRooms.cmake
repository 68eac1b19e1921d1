# The room table (cmake/rooms.txt) made into the build's include paths and link
# dependencies. Each room's headers are staged, as links to the sources, under
# build/rooms/ROOM with their repository paths ("fuzz/case/case.h"), and the
# room's target carries that folder as its include path and links the targets
# of the rooms it may use. So a source sees exactly the headers of its own room
# and of the rooms below it that the table names: an include the table forbids
# fails with "No such file or directory" (tests/rooms proves it).
#
# qcheck_read_rooms() reads the table at the start; qcheck_apply_rooms() runs
# after every folder has made its targets (a room's library is made in its
# folder; a room without one gets an INTERFACE target here).

set(QCHECK_ROOM_TABLE ${PROJECT_SOURCE_DIR}/cmake/rooms.txt)

function(qcheck_read_rooms)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${QCHECK_ROOM_TABLE})
  file(STRINGS ${QCHECK_ROOM_TABLE} lines REGEX "^[a-z]")
  set(rooms "")
  foreach(line IN LISTS lines)
    string(REPLACE "|" ";" fields "${line}")
    list(LENGTH fields count)
    if(NOT count EQUAL 4)
      message(FATAL_ERROR "qcheck: ${QCHECK_ROOM_TABLE}: a room line has 4 fields separated by |: '${line}'")
    endif()
    list(GET fields 0 room)
    list(GET fields 1 target)
    list(GET fields 2 paths)
    list(GET fields 3 uses)
    string(STRIP "${room}" room)
    string(STRIP "${target}" target)
    separate_arguments(paths UNIX_COMMAND "${paths}")
    separate_arguments(uses UNIX_COMMAND "${uses}")
    list(APPEND rooms ${room})
    set(QCHECK_ROOM_${room}_TARGET ${target} PARENT_SCOPE)
    set(QCHECK_ROOM_${room}_PATHS ${paths} PARENT_SCOPE)
    set(QCHECK_ROOM_${room}_USES ${uses} PARENT_SCOPE)
    list(APPEND all_paths ${paths})
  endforeach()
  set(QCHECK_ROOMS ${rooms} PARENT_SCOPE)
  set(QCHECK_ROOM_ALL_PATHS ${all_paths} PARENT_SCOPE)
endfunction()

# The files of one room that others may include: its headers, and its
# sources too (Highway's foreach_target includes a .cc once per target),
# except those inside a folder that another room names.
function(qcheck_room_headers room out)
  set(headers "")
  foreach(path IN LISTS QCHECK_ROOM_${room}_PATHS)
    set(full ${PROJECT_SOURCE_DIR}/${path})
    if(IS_DIRECTORY ${full})
      file(GLOB_RECURSE found CONFIGURE_DEPENDS RELATIVE ${PROJECT_SOURCE_DIR}
           ${full}/*.h ${full}/*.cuh ${full}/*.cc)
      foreach(header IN LISTS found)
        set(mine TRUE)
        foreach(other IN LISTS QCHECK_ROOM_ALL_PATHS)
          string(LENGTH "${other}" other_length)
          string(LENGTH "${path}" path_length)
          if(other_length GREATER path_length AND header MATCHES "^${other}/")
            set(mine FALSE)
          endif()
        endforeach()
        if(mine)
          list(APPEND headers ${header})
        endif()
      endforeach()
    elseif(path MATCHES "\\.(h|cuh|cc)$")
      list(APPEND headers ${path})
    endif()
  endforeach()
  set(${out} ${headers} PARENT_SCOPE)
endfunction()

function(qcheck_apply_rooms)
  foreach(room IN LISTS QCHECK_ROOMS)
    set(target ${QCHECK_ROOM_${room}_TARGET})
    if(target STREQUAL "-")
      continue()
    endif()
    if(NOT TARGET ${target})
      add_library(${target} INTERFACE)
    endif()
    get_target_property(type ${target} TYPE)
    set(scope PUBLIC)
    if(type STREQUAL "INTERFACE_LIBRARY")
      set(scope INTERFACE)
    endif()

    set(stage ${PROJECT_BINARY_DIR}/rooms/${room})
    qcheck_room_headers(${room} headers)
    set(staged_names "")
    foreach(header IN LISTS headers)
      # Public headers are included without their folder's "include/":
      # <qcheck/qcheck_plugin.h>, as a user's build includes them.
      string(REGEX REPLACE "^include/" "" name ${header})
      list(APPEND staged_names ${name})
      get_filename_component(folder ${stage}/${name} DIRECTORY)
      file(MAKE_DIRECTORY ${folder})
      if(NOT IS_SYMLINK ${stage}/${name})
        file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${header} ${stage}/${name} SYMBOLIC)
      endif()
    endforeach()
    # A header removed from the sources leaves a dangling link: drop it.
    file(GLOB_RECURSE staged LIST_DIRECTORIES false RELATIVE ${stage} ${stage}/*)
    foreach(header IN LISTS staged)
      if(NOT header IN_LIST staged_names)
        file(REMOVE ${stage}/${header})
      endif()
    endforeach()
    file(MAKE_DIRECTORY ${stage})
    target_include_directories(${target} ${scope} ${stage})

    foreach(used IN LISTS QCHECK_ROOM_${room}_USES)
      if(NOT DEFINED QCHECK_ROOM_${used}_TARGET)
        message(FATAL_ERROR "qcheck: ${QCHECK_ROOM_TABLE}: room ${room} may use '${used}', which is no room")
      endif()
      target_link_libraries(${target} ${scope} ${QCHECK_ROOM_${used}_TARGET})
    endforeach()
  endforeach()
endfunction()
