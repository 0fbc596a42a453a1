/* Test-only fault points: a build with DEBUG=1 (-DMOAT_DEBUG=1) can be made
 * to stop at a named stage of create, so that tests can kill -9 moat there
 * and check that `delete --force` still cleans up. In a release build
 * debug_pause() compiles to nothing. */
#ifndef MOAT_DEBUG_H
#define MOAT_DEBUG_H

#ifndef MOAT_DEBUG
#define MOAT_DEBUG 0
#endif

#if MOAT_DEBUG
/* If env MOAT_DEBUG_PAUSE equals STAGE: print "paused at STAGE" on stderr
 * and stop until killed. */
void debug_pause (const char *stage);
#else
#define debug_pause(stage) ((void)0)
#endif

#endif
