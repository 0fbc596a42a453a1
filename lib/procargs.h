/* The memory the kernel shows as /proc/PID/cmdline and /proc/PID/environ.
 * Every process moat clones into a container (the init, an exec's child)
 * is a copy of moat until it calls execve (a session's init for its whole
 * life): without this, a payload reads moat's argv there, the --env values
 * the profile stripped and the caller's host paths included. */
#ifndef MOAT_PROCARGS_H
#define MOAT_PROCARGS_H

/* In main, before anything reads argv or the environment: moves both to
 * the heap (argv[i] and environ point there afterwards), so that the
 * original block can be overwritten without anyone reading it. */
void procargs_take (int argc, char **argv);
/* The block shows "moat" and nothing else: no argument, no variable. */
void procargs_hide (void);
/* The block as it was (the parent, once its child is cloned). */
void procargs_show (void);

#endif
