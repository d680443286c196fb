#!/bin/sh
# A display program for tests: writes its pid and its argv (one element per line) to the
# file named by its first argument, then stays up 30 s as a display would.
out=$1
shift
{ echo "$$"; printf '%s\n' "$@"; } > "$out.tmp" && mv "$out.tmp" "$out"
exec sleep 30
