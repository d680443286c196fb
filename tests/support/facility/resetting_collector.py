"""A syslog collector that resets every connection: it reads a few bytes and
closes with the rest unread, which a C socket answers with a TCP reset (Deno's
sockets close gracefully, so the fake in Deno cannot). Prints its port, then
serves until killed: python3 resetting_collector.py [PORT]"""
import socket
import sys

s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 0))
s.listen(16)
print(s.getsockname()[1], flush=True)
while True:
    c, _ = s.accept()
    c.recv(16)
    c.close()
