# Writes OUT, a header defining QUEREUS_GIT_COMMIT (the commit of SRC, "-dirty" with local
# changes; "unknown" outside git), rewriting it only when it changes so that only what
# includes it rebuilds. Run at every build: cmake -DSRC=… -DOUT=… -P GitCommit.cmake
execute_process(COMMAND git describe --always --dirty --abbrev=12 WORKING_DIRECTORY ${SRC}
  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT commit)
  set(commit "unknown")
endif()
set(text "#define QUEREUS_GIT_COMMIT \"${commit}\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE ${OUT} "${text}")
endif()
