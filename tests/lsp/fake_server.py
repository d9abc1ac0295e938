"""A small language server for the failure cases the real ones cannot be made to show on
demand (Python standard library only).

    python3 fake_server.py [--mode MODE] [--pidfile FILE]

Modes:
  pull     (default) answers textDocument/diagnostic: an error wherever a line says ERROR;
  push     no pull diagnostics (-32601); publishes versioned diagnostics on each change;
  silent   answers initialize, then nothing else, exit included (a server that hangs);
  no-init  never answers initialize;
  crash    exits with status 3, saying why on stderr, on each diagnostics request.
Definitions and references: every occurrence of the word under the position.
--pidfile appends this process's id to FILE, one line per start, and "shutdown" and "exit"
as they arrive.
--envfile appends, at each start, one line `NAME=VALUE` (or `NAME unset`) to FILE for each
variable of ENV_REPORTED: what the process that speaks LSP was given.
"""

import json
import os
import re
import sys

mode = "pull"
pidfile = None
envfile = None
args = sys.argv[1:]
while args:
    flag = args.pop(0)
    if flag == "--mode":
        mode = args.pop(0)
    elif flag == "--pidfile":
        pidfile = args.pop(0)
    elif flag == "--envfile":
        envfile = args.pop(0)

# Provider credentials (which no child of Hearth may see) and a test confinement's mark.
ENV_REPORTED = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HEARTH_WRAPPED")


def record(event):
    if pidfile:
        with open(pidfile, "a") as pids:
            pids.write(f"{event}\n")


record(os.getpid())

if envfile:
    with open(envfile, "a") as report:
        for name in ENV_REPORTED:
            value = os.environ.get(name)
            report.write(f"{name} unset\n" if value is None else f"{name}={value}\n")

stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
documents = {}


def read():
    length = None
    while True:
        line = stdin.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        name, value = line.decode().split(":", 1)
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(stdin.read(length))


def send(message):
    body = json.dumps(dict(message, jsonrpc="2.0")).encode()
    stdout.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    stdout.flush()


def errors(text):
    found = []
    for number, line in enumerate(text.split("\n")):
        column = line.find("ERROR")
        if column >= 0:
            found.append({
                "range": {"start": {"line": number, "character": column},
                          "end": {"line": number, "character": column + 5}},
                "severity": 1, "source": "fake", "message": "ERROR found",
            })
    return found


def occurrences(uri, position):
    line = documents[uri].split("\n")[position["line"]]
    words = [m for m in re.finditer(r"\w+", line)
             if m.start() <= position["character"] <= m.end()]
    if not words:
        return []
    word = words[0].group()
    places = []
    for other, text in sorted(documents.items()):
        for number, content in enumerate(text.split("\n")):
            for m in re.finditer(r"\b%s\b" % re.escape(word), content):
                places.append({"uri": other, "range": {
                    "start": {"line": number, "character": m.start()},
                    "end": {"line": number, "character": m.end()}}})
    return places


def changed(params):
    document = params["textDocument"]
    if "text" in document:
        documents[document["uri"]] = document["text"]
    else:
        documents[document["uri"]] = params["contentChanges"][-1]["text"]
    if mode == "push":
        send({"method": "textDocument/publishDiagnostics", "params": {
            "uri": document["uri"], "version": document["version"],
            "diagnostics": errors(documents[document["uri"]])}})


def answer(message):
    method, params = message["method"], message.get("params") or {}
    if method == "initialize":
        if mode == "no-init":
            return None
        capabilities = {"textDocumentSync": 1, "definitionProvider": True,
                        "referencesProvider": True}
        if mode != "push":
            capabilities["diagnosticProvider"] = {
                "interFileDependencies": False, "workspaceDiagnostics": False}
        return {"result": {"capabilities": capabilities, "serverInfo": {"name": "fake"}}}
    if mode == "silent":
        return None
    if method == "shutdown":
        return {"result": None}
    if method == "textDocument/diagnostic":
        if mode == "crash":
            sys.stderr.write("fake server: crashing as asked\n")
            sys.stderr.flush()
            os._exit(3)
        if mode == "push":
            return {"error": {"code": -32601, "message": "no pull diagnostics"}}
        uri = params["textDocument"]["uri"]
        return {"result": {"kind": "full", "items": errors(documents.get(uri, ""))}}
    if method == "textDocument/definition":
        places = occurrences(params["textDocument"]["uri"], params["position"])
        return {"result": places[:1]}
    if method == "textDocument/references":
        return {"result": occurrences(params["textDocument"]["uri"], params["position"])}
    return {"error": {"code": -32601, "message": method}}


while True:
    message = read()
    if message is None:
        break
    if message.get("method") in ("shutdown", "exit"):
        record(message["method"])
    if message.get("method") == "exit" and mode != "silent":
        break
    if "id" not in message:
        if message.get("method") in ("textDocument/didOpen", "textDocument/didChange"):
            changed(message["params"])
        elif message.get("method") == "textDocument/didClose":
            documents.pop(message["params"]["textDocument"]["uri"], None)
        continue
    if "method" not in message:
        continue
    reply = answer(message)
    if reply is not None:
        send(dict(reply, id=message["id"]))
