"""A misbehaving MCP server over stdio, for the fault tests of hpd-agent's MCP client.

Speaks newline-delimited JSON-RPC 2.0 directly (standard library only) so that each fault is
exact. Usage: ``python3 fault_server.py MODE``. Every mode offers ``echo`` (returns its
``text`` argument) plus the tool that triggers the fault:

- ``crash``      ``crash`` makes the process exit without answering.
- ``hang``       ``hang`` makes the process stop reading and answering anything.
- ``malformed``  the tool list is malformed (``tools`` is not a list) from the start.
- ``malformed-later``
                 ``break_list`` sends ``notifications/tools/list_changed`` and every later
                 ``tools/list`` answer is malformed.
- ``huge``       ``huge`` returns a text of ``size`` characters (default 2,000,000).
- ``names``      offers tools whose names are not valid provider tool names: ``read.file``,
                 ``two words`` and a name of 70 characters (all behave like ``echo``).
- ``clash``      offers ``x.y`` and ``x/y``, which both sanitise to the same name.
- ``list-changed``
                 ``add_tool`` adds the tool ``extra`` (answers "extra ran") and sends
                 ``notifications/tools/list_changed``.
- ``many``       offers ``FAULT_TOOL_COUNT`` (default 5,000) more tools ``tool_0``,
                 ``tool_1``, ... (each answers "tool N ran"), each with a long description.
- ``odd-names``  offers tools named with odd characters (empty, non-ASCII, control
                 characters, path separators, 10,000 characters); all behave like ``echo``.
- ``schemas``    offers tools whose ``inputSchema`` is not an object schema (a string, null,
                 a list, a number, an array schema, missing); calling one answers "ran anyway".
                 Its ``echo`` lists annotations with one hint that is not a boolean.

Every environment variable whose name starts with ``FAULT_SECRET`` is written to stderr at
start (``env NAME=VALUE``), as a careless server would, for the secret-scrubbing tests.

If the environment variable ``FAULT_SERVER_LOG`` names a file, the server appends one line
``start MODE PID`` to it when it starts, so a test can count restarts and check that the
process ended.
"""

import json
import os
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "crash"
KNOWN_VERSIONS = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}

NAME_MODE_TOOLS = ["read.file", "two words", "n" * 70]
ODD_NAMES = ["", "日本語ツール", "tab\tname", "new\nline", "a/b", "../../etc/passwd",
             "nul\u0000byte", "x" * 10_000, "emoji 🎉"]
TOOL_COUNT = int(os.environ.get("FAULT_TOOL_COUNT", "5000"))
BAD_SCHEMAS = {"schema_string": "not a schema", "schema_null": None, "schema_list": [1, 2],
               "schema_number": 42, "schema_array": {"type": "array"}}

state = {"extra": False, "broken_list": False}


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def tool(name, description, properties=None, required=None):
    schema = {"type": "object", "properties": properties or {}}
    if required:
        schema["required"] = required
    return {"name": name, "description": description, "inputSchema": schema}


def tools():
    listed = [tool("echo", "Echoes its text", {"text": {"type": "string"}}, ["text"])]
    if MODE == "crash":
        listed.append(tool("crash", "Exits the server process"))
    elif MODE == "hang":
        listed.append(tool("hang", "Never answers"))
    elif MODE == "malformed-later":
        listed.append(tool("break_list", "Breaks the tool list"))
    elif MODE == "huge":
        listed.append(tool("huge", "Returns a huge text", {"size": {"type": "integer"}}))
    elif MODE == "names":
        for name in NAME_MODE_TOOLS:
            listed.append(tool(name, "Echoes its text", {"text": {"type": "string"}}, ["text"]))
    elif MODE == "clash":
        listed.append(tool("x.y", "One tool"))
        listed.append(tool("x/y", "Another tool"))
    elif MODE == "list-changed":
        listed.append(tool("add_tool", "Adds the tool 'extra'"))
        if state["extra"]:
            listed.append(tool("extra", "A tool added at run time"))
    elif MODE == "many":
        for n in range(TOOL_COUNT):
            listed.append(tool(f"tool_{n}", f"Tool number {n}. " + "A long description. " * 5))
    elif MODE == "odd-names":
        for name in ODD_NAMES:
            listed.append(tool(name, "Echoes its text", {"text": {"type": "string"}}))
    elif MODE == "schemas":
        listed[0]["annotations"] = {"readOnlyHint": True, "destructiveHint": "no",
                                    "openWorldHint": False}
        for name, schema in BAD_SCHEMAS.items():
            listed.append({"name": name, "description": "A tool with a bad schema",
                           "inputSchema": schema})
        listed.append({"name": "schema_missing", "description": "A tool without a schema"})
    return listed


def text_result(text, is_error=False):
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def call_tool(request_id, params):
    name = params.get("name")
    arguments = params.get("arguments") or {}
    if name == "echo" or (MODE == "names" and name in NAME_MODE_TOOLS) or (
        MODE == "odd-names" and name in ODD_NAMES
    ):
        send({"jsonrpc": "2.0", "id": request_id, "result": text_result(str(arguments.get("text", "")))})
    elif name == "crash" and MODE == "crash":
        sys.stderr.write("fault server: crashing on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    elif name == "hang" and MODE == "hang":
        while True:
            time.sleep(3600)
    elif name == "break_list" and MODE == "malformed-later":
        state["broken_list"] = True
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        send({"jsonrpc": "2.0", "id": request_id, "result": text_result("tool list broken")})
    elif name == "huge" and MODE == "huge":
        size = int(arguments.get("size", 2_000_000))
        send({"jsonrpc": "2.0", "id": request_id, "result": text_result("x" * size)})
    elif name == "add_tool" and MODE == "list-changed":
        state["extra"] = True
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        send({"jsonrpc": "2.0", "id": request_id, "result": text_result("tool 'extra' added")})
    elif MODE == "many" and name.startswith("tool_"):
        send({"jsonrpc": "2.0", "id": request_id, "result": text_result(f"tool {name[5:]} ran")})
    elif MODE == "schemas" and name.startswith("schema_"):
        send({"jsonrpc": "2.0", "id": request_id, "result": text_result("ran anyway")})
    elif name == "extra" and MODE == "list-changed" and state["extra"]:
        send({"jsonrpc": "2.0", "id": request_id, "result": text_result("extra ran")})
    else:
        send({"jsonrpc": "2.0", "id": request_id, "result": text_result(f"unknown tool {name}", True)})


def handle(message):
    method = message.get("method")
    request_id = message.get("id")
    if request_id is None:
        return  # a notification: nothing to answer
    if method == "initialize":
        requested = (message.get("params") or {}).get("protocolVersion")
        version = requested if requested in KNOWN_VERSIONS else "2025-06-18"
        send({
            "jsonrpc": "2.0",
            "id": request_id,
            "result": {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": f"fault-{MODE}", "version": "1.0.0"},
            },
        })
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": request_id, "result": {}})
    elif method == "tools/list":
        if MODE == "malformed" or state["broken_list"]:
            send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": "not a list"}})
        else:
            send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": tools()}})
    elif method == "tools/call":
        call_tool(request_id, message.get("params") or {})
    else:
        send({
            "jsonrpc": "2.0",
            "id": request_id,
            "error": {"code": -32601, "message": f"method not found: {method}"},
        })


def main():
    for name, value in sorted(os.environ.items()):
        if name.startswith("FAULT_SECRET"):
            sys.stderr.write(f"env {name}={value}\n")
    sys.stderr.flush()
    log = os.environ.get("FAULT_SERVER_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"start {MODE} {os.getpid()}\n")
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            continue
        handle(message)


if __name__ == "__main__":
    main()
