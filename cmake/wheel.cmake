# What pip's wheel holds (pyproject.toml): the install component `wheel`, left out of a plain
# cmake --install. scikit-build-core installs it with the prefix at the wheel's
# site-packages/simprec, so the package, the command-line tool and what the tool needs sit
# together there:
#   simprec/__init__.py ... _simprec.*.so   the Python package
#   simprec/bin/simprec, simprec-plugin-runner
#   simprec/<libdir>/simprec/plugins/        the built-in plugins
# which is the layout of an installed prefix that the tool finds its runner and plugins in
# (plugins/host/plugin.cpp, plugin_search.cpp), so no path needs setting. The console script
# `simprec` and `python -m simprec` run simprec/bin/simprec (python/simprec/__main__.py).

install(TARGETS simprec simprec-plugin-runner RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        COMPONENT wheel EXCLUDE_FROM_ALL)
install(TARGETS ${SIMPREC_BUILTIN_PLUGINS} LIBRARY DESTINATION ${SIMPREC_PLUGIN_INSTALL_DIR}
        COMPONENT wheel EXCLUDE_FROM_ALL)
simprec_build_info(${CMAKE_BINARY_DIR}/python/wheel/_build_info.py /prefix
                   /prefix/${CMAKE_INSTALL_BINDIR}/simprec)
simprec_install_python_package(. ${CMAKE_BINARY_DIR}/python/wheel/_build_info.py
                               COMPONENT wheel EXCLUDE_FROM_ALL)

# What the wheel's build builds (build.targets): its files and nothing else (no tests).
add_custom_target(simprec_wheel DEPENDS simprec simprec-plugin-runner ${SIMPREC_BUILTIN_PLUGINS}
                                        simprec_python)
