# The project's one set of compiler warnings: every target links mario::warnings, so no
# CMakeLists repeats a flag. MARIO_WERROR (on in the `ci` preset, which the README's test command
# uses) turns every warning into an error, so the build stays warning-free.
option(MARIO_WERROR "Treat compiler warnings as errors" OFF)

add_library(mario_warnings INTERFACE)
add_library(mario::warnings ALIAS mario_warnings)
target_compile_options(mario_warnings INTERFACE
  "$<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>:-Wall;-Wextra;-Wpedantic>"
  # GCC 12 reports -Wrestrict on `"literal" + std::string` from inside libstdc++ (GCC bug
  # 105329, fixed in GCC 13): a false positive in the standard library, not in our code.
  $<$<AND:$<COMPILE_LANG_AND_ID:CXX,GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,13>>:-Wno-restrict>
  $<$<AND:$<BOOL:${MARIO_WERROR}>,$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>>:-Werror>)
