/* version.c — hlo_version and hlo_build_id (include/hlo/hlo.h): the figures
 * the Makefile writes into $(BUILD)/gen/hlo_build_id.h. */
#include "hlo/hlo.h"
#include "hlo_build_id.h" /* HLO_VERSION, HLO_BUILD_ID: made by the Makefile */

const char *hlo_version(void) { return HLO_VERSION; }

const char *hlo_build_id(void) { return HLO_BUILD_ID; }
