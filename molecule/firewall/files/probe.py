# Probe TCP ports of a lab host from given source addresses, all at once: each probe is a connect() bound to its
# source with a short timeout. Prints JSON: [{"source", "port", "result"}] with result "open" (connected),
# "refused" (a RST: no listener, or a reject) or "timeout" (dropped). argv: TARGET TIMEOUT SOURCE:PORT ...
import json
import socket
import sys
import threading

target, timeout, pairs = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
results = []


def probe(source, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        if source != '-':
            s.bind((source, 0))
        s.connect((target, int(port)))
        result = 'open'
    except socket.timeout:
        result = 'timeout'
    except ConnectionRefusedError:
        result = 'refused'
    except OSError as exc:
        result = 'error: %s' % exc
    finally:
        s.close()
    results.append({'source': source, 'port': int(port), 'result': result})


threads = [threading.Thread(target=probe, args=pair.rsplit(':', 1)) for pair in pairs]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps(sorted(results, key=lambda r: (r['source'], r['port']))))
