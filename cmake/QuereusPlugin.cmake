# quereus_add_plugin(<name> SOURCES ... [MANIFEST file] [INSTALL])
#
# Builds a plugin shared library into build/lib/quereus/<name>.so next to its manifest
# <name>.plugin.json. INSTALL: `cmake --install` puts both in <prefix>/lib/quereus (the
# `runtime` component), where an installed `quereus` looks for plugins. A plugin sees ONLY sdk/include/ (the target links nothing but
# quereus::sdk, and the include path is checked below), exports only its entry points
# (hidden visibility) and is built exactly as a third party's would be.
function(quereus_add_plugin name)
  cmake_parse_arguments(P "INSTALL" "MANIFEST" "SOURCES" ${ARGN})
  add_library(${name} MODULE ${P_SOURCES})
  set_target_properties(${name} PROPERTIES
    PREFIX ""
    OUTPUT_NAME ${name}
    LIBRARY_OUTPUT_DIRECTORY ${QUEREUS_PLUGIN_OUTPUT_DIR}
    CXX_VISIBILITY_PRESET hidden
    C_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_link_libraries(${name} PRIVATE quereus::sdk)
  # Enforce the SDK boundary: the only include directory is sdk/include (also checked
  # over compile_commands.json by the test build.plugin_include_boundary).
  get_target_property(_incs ${name} INCLUDE_DIRECTORIES)
  if(_incs)
    message(FATAL_ERROR "plugin ${name} must not add include directories (${_incs}); use sdk/include only")
  endif()
  if(P_MANIFEST)
    add_custom_command(TARGET ${name} POST_BUILD
      COMMAND ${CMAKE_COMMAND} -E copy ${CMAKE_CURRENT_SOURCE_DIR}/${P_MANIFEST}
              ${QUEREUS_PLUGIN_OUTPUT_DIR}/${name}.plugin.json)
  endif()
  if(P_INSTALL)
    install(TARGETS ${name} LIBRARY DESTINATION lib/quereus COMPONENT runtime)
    if(P_MANIFEST)
      install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/${P_MANIFEST} DESTINATION lib/quereus
              RENAME ${name}.plugin.json COMPONENT runtime)
    endif()
  endif()
endfunction()
