# TCP listeners for the firewall probes: accepts on every port given and closes at once.
import selectors
import socket
import sys

sel = selectors.DefaultSelector()
for port in sys.argv[1:]:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(('0.0.0.0', int(port)))
    s.listen(64)
    sel.register(s, selectors.EVENT_READ)
while True:
    for key, _ in sel.select():
        conn, _ = key.fileobj.accept()
        conn.close()
