/* process.terminal: a pty made inside the container (devpts newinstance),
 * its master handed to the engine through --console-socket. */
#ifndef MOAT_TERMINAL_H
#define MOAT_TERMINAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../lib/error.h"
#include "../../lib/fdpass.h"

/* In the container (after /dev/pts is mounted and the root is pivoted):
 * open /dev/ptmx (checked to be the real ptmx), unlock it, open the peer
 * with TIOCGPTPEER, make it the controlling terminal and fds 0-2, set the
 * size if given. Returns the master fd in *ret_master (O_CLOEXEC). */
int terminal_setup_child (bool has_size, uint32_t height, uint32_t width,
                          int *ret_master, struct moat_error **err);
/* Connect to the engine's console socket and send the master. */
int terminal_send_to_console_socket (const char *path, int master,
                                     struct moat_error **err);
/* For `moat run -t` without --console-socket: copy between our stdio and the
 * master until the master hangs up (stdin in raw mode when it is a tty). */
int terminal_relay (int master, struct moat_error **err);

#endif
