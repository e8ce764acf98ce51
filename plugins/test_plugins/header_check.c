/* Compiled as strict ISO C11 (-pedantic-errors) by plugins/CMakeLists.txt: the plugin header
 * must stay plain C, and its static size assertions hold for this compiler. */
#include "plugins/simprec_plugin.h"

int simprec_header_check_abi_major(void) {
  return SIMPREC_PLUGIN_ABI_MAJOR;
}
