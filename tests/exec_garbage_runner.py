"""A runner that greets properly, then answers a prepare with a line that is not JSON.

Argument: a protocol version to claim instead of the harness's, or ``reject`` to answer every
prepare with ``rejected``."""

import json
import sys

mode = sys.argv[1] if len(sys.argv) > 1 else ""
for line in sys.stdin:
    request = json.loads(line)
    if request["op"] == "hello":
        reply = json.dumps({"status": "ok", "protocol": int(mode) if mode.isdigit() else request["protocol"], "name": "garbage"})
    elif mode == "reject":
        reply = json.dumps({"status": "rejected", "message": "this runner refuses every model"})
    else:
        print("garbage runner: about to misbehave", file=sys.stderr, flush=True)
        reply = "<<this is not a reply>>"
    sys.stdout.write(reply + "\n")
    sys.stdout.flush()
