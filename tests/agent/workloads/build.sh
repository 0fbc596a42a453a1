# An agent's C build: gcc and make of a small program, then run it.
set -e
d=$(mktemp -d)
cd "$d"
printf '#include <stdio.h>\nint twice (int x);\nint main (void) { printf ("%%d\\n", twice (21)); return 0; }\n' >main.c
printf 'int twice (int x) { return 2 * x; }\n' >twice.c
printf 'prog: main.o twice.o\n\t$(CC) -o $@ $^\n%%.o: %%.c\n\t$(CC) -O2 -c $<\n' >Makefile
make -s CC=gcc
# /tmp is noexec (G13): the program is built, not run, here.
[ -s prog ]
cd / && rm -rf "$d"
echo build ok
