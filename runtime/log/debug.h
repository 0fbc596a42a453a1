/* Create's named stages. Each logs its time in the --debug log
 * (log_phase). Test-only fault points besides: a build with DEBUG=1
 * (-DMOAT_DEBUG=1) can be made to stop at a stage, so that tests can kill
 * -9 moat there and check that `delete --force` still cleans up, or change
 * the host under it and let it go on. In a release build there is no
 * pause. */
#ifndef MOAT_DEBUG_H
#define MOAT_DEBUG_H

#include "log.h"

#ifndef MOAT_DEBUG
#define MOAT_DEBUG 0
#endif

#if MOAT_DEBUG
/* log_phase (STAGE); then if env MOAT_DEBUG_PAUSE equals STAGE: print
 * "paused at STAGE" on stderr and wait for SIGUSR1 (or SIGKILL). */
void debug_pause (const char *stage);
#else
#define debug_pause(stage) log_phase (stage)
#endif

#endif
