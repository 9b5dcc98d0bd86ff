# Precompiled headers for heavy header families (issue 45): Qt Widgets with QCustomPlot, which
# the views include. One header set per library target, compiled once and loaded by each unit.
# Measured on the 2-core CI-like machine (user + system CPU, 2026-11-28, loaded): the views
# library's 27 units 156 -> 111 s with <qcustomplot.h> precompiled (the header itself 15 s,
# once); one unit, views/GanttOverview.cpp, 6.9 -> 1.6 s.
# Included after the subdirectories, so it finds their targets. MARIO_PCH=OFF builds without; as
# with MARIO_CCACHE, the default is on in a new build folder and off in one configured before.
option(MARIO_PCH "Precompile the heavy headers (Qt Widgets and QCustomPlot for the views)"
       ${mario_fresh_tree})

if(MARIO_PCH)
  # The views: QCustomPlot's one header brings all of Qt Widgets, Gui and PrintSupport.
  if(TARGET mario_views)
    target_precompile_headers(mario_views PRIVATE <qcustomplot.h>)
  endif()
endif()
