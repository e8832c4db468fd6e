# The rider page (resources/web) compiled into a target as Qt resources under :/taxicore/web/,
# served by server/http/StaticAssets.cpp. Usage (server/http/CMakeLists.txt):
#   include(${CMAKE_CURRENT_SOURCE_DIR}/web-assets.cmake)
#   taxicore_add_web_assets(taxicore_http)
function(taxicore_add_web_assets target)
  set(_web_dir ${CMAKE_SOURCE_DIR}/resources/web)
  # Every page file; the README and licence texts stay out of the binary.
  file(GLOB _web_files CONFIGURE_DEPENDS
       ${_web_dir}/*.html ${_web_dir}/*.js ${_web_dir}/*.css ${_web_dir}/*.svg)
  qt_add_resources(${target} "taxicore_web"
    PREFIX /taxicore
    BASE ${CMAKE_SOURCE_DIR}/resources
    FILES ${_web_files})
endfunction()
