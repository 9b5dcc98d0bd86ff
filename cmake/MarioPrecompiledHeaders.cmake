# Precompiled headers for heavy header families (issue 45): Qt Widgets with QCustomPlot, which
# the views include, and LibTorch, which the executor includes. One header set per library target, compiled once and loaded by each unit.
# Measured on the 2-core CI-like machine (user + system CPU, 2026-11-28, loaded): the views
# library's 27 units 156 -> 111 s with <qcustomplot.h> precompiled (the header itself 15 s,
# once); one unit, views/GanttOverview.cpp, 6.9 -> 1.6 s. LibTorch's <torch/torch.h> for the
# executor's Torch-heavy units and its Torch tests: building mario_executor, mario-executor and
# both executor test binaries (Debian's LibTorch 1.13, GCC 12, -j2, the same folder and one run
# each, 2026-11-28, machine shared with other builds) took 733 s of CPU without and 515 s with
# (-30%), the two precompiled headers' own compiles included (~35 s each in the build's log, ~630 MB
# on disk each); against PyTorch 2.15's LibTorch (the torch2 preset's settings) 823 -> 592 s (-28%).
# Included after the subdirectories, so it finds their targets. MARIO_PCH=OFF builds without; as
# with MARIO_CCACHE, the default is on in a new build folder and off in one configured before.
option(MARIO_PCH "Precompile the heavy headers (QCustomPlot for the views, LibTorch for the executor)"
       ${mario_fresh_tree})

if(MARIO_PCH)
  # The views: QCustomPlot's one header brings all of Qt Widgets, Gui and PrintSupport.
  if(TARGET mario_views)
    target_precompile_headers(mario_views PRIVATE <qcustomplot.h>)
  endif()
  # The executor: <torch/torch.h> for its Torch-heavy units (executor/CMakeLists.txt marks the
  # others SKIP_PRECOMPILE_HEADERS). The Torch tests build their own copy rather than REUSE_FROM
  # the library's: GCC takes a precompiled header only where the macros its headers test are
  # defined alike, and the library compiles with the torch target's definitions
  # (USE_DISTRIBUTED, which torch/csrc/jit/runtime/interpreter.h tests; glog's and gflags'), which
  # the tests, linking the library and not torch, lack; -Werror would make the -Winvalid-pch
  # warning a failed build.
  if(TARGET mario_executor)
    target_precompile_headers(mario_executor PRIVATE <torch/torch.h>)
  endif()
  if(TARGET mario_executor_torch_tests)
    target_precompile_headers(mario_executor_torch_tests PRIVATE <torch/torch.h>)
  endif()
endif()
