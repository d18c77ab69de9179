# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TEST INFRASTRUCTURE (scripts/fleet-test, step pull): a tiny HTTP endpoint for gpufleet-pull results on the lab
bridge address - PUT /<prefix>/<node>.json stores the body as <dir>/<node>.json (atomically), what a WebDAV-enabled
web server or a small collector does in production. --refuse NODE answers 403 to that node's PUT: the PLANTED
"destination refuses the write" that makes one node not report.

    pull-receiver.py --bind 10.254.77.1 --dir RESULTS --port-file PORTFILE [--refuse fleet-n4]
"""

import argparse
import json
import os
import re
import sys
import tempfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--bind', required=True)
    p.add_argument('--port', type=int, default=0)
    p.add_argument('--port-file', required=True)
    p.add_argument('--dir', required=True)
    p.add_argument('--refuse', action='append', default=[])
    args = p.parse_args()

    class Handler(BaseHTTPRequestHandler):
        def do_PUT(self):
            m = re.match(r'^/[A-Za-z0-9/_-]*?/?([A-Za-z0-9][A-Za-z0-9._-]*)\.json$', self.path)
            body = self.rfile.read(int(self.headers.get('Content-Length') or 0))
            if not m:
                return self._answer(400, 'PUT /<prefix>/<node>.json')
            node = m.group(1)
            if node in args.refuse:
                return self._answer(403, 'PLANTED: this endpoint refuses %s' % node)
            try:
                json.loads(body.decode('utf-8'))
            except ValueError:
                return self._answer(400, 'not JSON')
            fd, tmp = tempfile.mkstemp(prefix='.%s.' % node, dir=args.dir)
            with os.fdopen(fd, 'wb') as f:
                f.write(body)
            os.chmod(tmp, 0o644)
            os.rename(tmp, os.path.join(args.dir, node + '.json'))
            self._answer(201, 'stored %s' % node)

        def _answer(self, code, text):
            data = (text + '\n').encode()
            self.send_response(code)
            self.send_header('Content-Length', str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, fmt, *a):
            sys.stdout.write('pull-receiver: %s %s\n' % (self.client_address[0], fmt % a))
            sys.stdout.flush()

    server = ThreadingHTTPServer((args.bind, args.port), Handler)
    with open(args.port_file + '.tmp', 'w') as f:
        f.write('%d\n' % server.server_address[1])
    os.rename(args.port_file + '.tmp', args.port_file)
    server.serve_forever()


if __name__ == '__main__':
    main()
