# A compiler cache where one is installed (found, never required): ccache serves a rebuild of an
# unchanged translation unit from its cache, so a second configure of the same tree (another
# preset, a fresh clone on a CI runner that keeps ~/.ccache, a `git checkout` back and forth)
# compiles only what changed. packaging/install-deps.sh installs it; without it nothing changes.
# MARIO_CCACHE=OFF builds without it (to time a cold compile, or to rule the cache out). It is on
# by default in a new build folder only: switching a configured one would change every compile
# command and so rebuild everything once (-DMARIO_CCACHE=ON does that on purpose).
option(MARIO_CCACHE "Compile through ccache when it is installed" ${mario_fresh_tree})

if(MARIO_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(MARIO_CCACHE_PROGRAM ccache)
  if(MARIO_CCACHE_PROGRAM)
    # Units built with a precompiled header (target_precompile_headers) are cached only with
    # this sloppiness (ccache's manual, "Precompiled headers"); set for each compile, since the
    # build does not inherit the configure step's environment.
    set(launcher "${CMAKE_COMMAND}" -E env
        "CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime"
        "${MARIO_CCACHE_PROGRAM}")
    set(CMAKE_CXX_COMPILER_LAUNCHER ${launcher})
    set(CMAKE_CUDA_COMPILER_LAUNCHER ${launcher})
    message(STATUS "Mario: compiling through ${MARIO_CCACHE_PROGRAM}")
  endif()
endif()
