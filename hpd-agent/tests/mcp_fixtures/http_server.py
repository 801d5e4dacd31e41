"""A small MCP server built with the official Python SDK, served over streamable HTTP.

Usage: ``python http_server.py PORT``. Listens on 127.0.0.1:PORT at ``/mcp`` and prints
``ready`` on standard output once it accepts connections. The tests of hpd-agent's MCP client
connect to it to check the streamable HTTP transport against an implementation other than
their own.
"""

import socket
import sys
import threading
import time

from mcp.server.mcpserver import MCPServer

server = MCPServer("Calculator", instructions="Arithmetic on integers.")


@server.tool()
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


@server.tool()
def greet(name: str) -> str:
    """Greets someone by name."""
    return f"Hello, {name}!"


def announce_when_listening(port):
    for _ in range(300):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                print("ready", flush=True)
                return
        except OSError:
            time.sleep(0.05)


if __name__ == "__main__":
    port = int(sys.argv[1])
    threading.Thread(target=announce_when_listening, args=(port,), daemon=True).start()
    server.run("streamable-http", host="127.0.0.1", port=port, streamable_http_path="/mcp")
