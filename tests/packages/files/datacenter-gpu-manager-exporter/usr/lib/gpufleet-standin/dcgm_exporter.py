# gpufleet TEST stand-in for NVIDIA's dcgm-exporter (not NVIDIA's software, no GPU is read): it takes the options the
# monitoring_node role's unit passes (-f COLLECTORS_FILE, -a [ADDRESS]:PORT), refuses a collectors file that is not
# dcgm-exporter's CSV format (FIELD, TYPE, HELP; TYPE gauge, counter or label) as the real one does at start, and
# serves /metrics with one sample per field of that file - every value 0 and labelled gpufleet_standin="1" - so that
# the role's install, counters file, unit and Prometheus's scrape run for real on GPU-less lab hosts.
import http.server
import re
import sys

TYPES = ("gauge", "counter", "label")


def fail(msg):
    sys.stderr.write("dcgm-exporter (gpufleet test stand-in): %s\n" % msg)
    sys.exit(1)


def parse(argv):
    path, address = "/etc/dcgm-exporter/default-counters.csv", ":9400"
    i = 0
    while i < len(argv):
        if argv[i] in ("-f", "--collectors") and i + 1 < len(argv):
            path, i = argv[i + 1], i + 2
        elif argv[i] in ("-a", "--address") and i + 1 < len(argv):
            address, i = argv[i + 1], i + 2
        elif argv[i] in ("-v", "--version"):
            print("dcgm-exporter version 4.1.1-4.0.4 (gpufleet test stand-in)")
            sys.exit(0)
        else:
            fail("unknown option %s" % argv[i])
    host, port = address.rpartition(":")[0::2]
    if not port.isdigit():
        fail("-a %s: not [ADDRESS]:PORT" % address)
    return path, host, int(port)


def fields(path):
    out = []
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as exc:
        fail("cannot read the collectors file %s: %s" % (path, exc))
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = [p.strip() for p in line.split(",", 2)]
        if len(parts) != 3 or not re.match(r"^DCGM_(FI|EXP)_[A-Z0-9_]+$", parts[0]) or parts[1] not in TYPES:
            fail("%s line %d is not 'DCGM_FI_FIELD, gauge|counter|label, help': %r" % (path, number, line))
        out.append(parts)
    if not out:
        fail("%s lists no field" % path)
    return out


def main():
    path, host, port = parse(sys.argv[1:])
    metrics = fields(path)
    body = "".join("# HELP %s %s\n# TYPE %s %s\n%s{gpu=\"0\",gpufleet_standin=\"1\"} 0\n"
                   % (name, help_text, name, kind if kind != "label" else "gauge", name)
                   for name, kind, help_text in metrics).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path != "/metrics":
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    http.server.HTTPServer((host, port), Handler).serve_forever()


main()
