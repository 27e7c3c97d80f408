"""A runner that greets properly, then answers a prepare with a line that is not JSON."""

import json
import sys

for line in sys.stdin:
    request = json.loads(line)
    if request["op"] == "hello":
        reply = json.dumps({"status": "ok", "protocol": request["protocol"] if len(sys.argv) < 2 else int(sys.argv[1]), "name": "garbage"})
    else:
        print("garbage runner: about to misbehave", file=sys.stderr, flush=True)
        reply = "<<this is not a reply>>"
    sys.stdout.write(reply + "\n")
    sys.stdout.flush()
