# CPack: `cpack -G DEB` in the build folder makes a .deb of what `install` puts in place.
set(CPACK_PACKAGE_NAME "mario-workbench")
set(CPACK_PACKAGE_VENDOR "Mario Workbench")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "Mario Workbench developers")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
include(CPack)
