"""Drives hpd-agent's MCP server with the official Python SDK's client.

Usage:
    python python_client.py stdio COMMAND [ARG...]
    python python_client.py http URL TOKEN

The server must serve the harnesses of hpd-agent's ``mcp_server`` example in the default
``fixed`` collapsing layout: the plain ``get_weather``, the collapsed ``MathTools`` (``add``,
``multiply``), the collapsed ``TextTools`` (``uppercase``, ``word_count``) and the call tool
``call_function``. The script lists the tools, expands ``MathTools`` (its result carries the
members' schemas, and no ``notifications/tools/list_changed`` may come), lists again (the same
list), calls ``multiply`` through ``call_function``, then calls ``uppercase``, a member of the
other, still collapsed container, by name. It prints one line per step and exits with status 1
and a message at the first check that fails.
"""

import asyncio
import sys

import anyio
from mcp import Client, StdioServerParameters


class Failed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failed(message)


def text_of(result):
    return "\n".join(getattr(block, "text", "") for block in result.content)


async def run(target):
    changes = []
    changed = anyio.Event()

    async def on_message(message):
        method = getattr(message, "method", None)
        if method is None:
            root = getattr(message, "root", None)
            method = getattr(root, "method", None)
        if method == "notifications/tools/list_changed":
            changes.append(method)
            changed.set()

    async with Client(target, message_handler=on_message) as client:
        print(f"connected: protocol {client.protocol_version}", flush=True)

        first = [tool.name for tool in (await client.list_tools()).tools]
        print(f"tools: {first}", flush=True)
        check(
            first == ["get_weather", "MathTools", "TextTools", "call_function"],
            f"unexpected first list {first}",
        )

        expanded = await client.call_tool("MathTools", {})
        text = text_of(expanded)
        print(f"MathTools -> {text!r}", flush=True)
        check(not expanded.is_error, "calling the container failed")
        check("multiply" in text and '"a"' in text, "the container result does not list members with schemas")
        # The fixed layout never changes the list: give a notification time to arrive.
        await anyio.sleep(1)
        check(not changes, f"the server sent {changes} in the fixed layout")

        names = [tool.name for tool in (await client.list_tools()).tools]
        print(f"tools: {names}", flush=True)
        check(names == first, f"the list changed after an expansion: {names}")

        product = await client.call_tool("call_function", {"name": "multiply", "arguments": {"a": 17, "b": 23}})
        print(f"call_function multiply -> {text_of(product)!r}", flush=True)
        check(not product.is_error and text_of(product) == "391", "multiply did not return 391")

        upper = await client.call_tool("uppercase", {"text": "hidden member"})
        print(f"uppercase (hidden) -> {text_of(upper)!r}", flush=True)
        check(not upper.is_error, "calling a hidden member failed")
        check("HIDDEN MEMBER" in text_of(upper), "the hidden member did not run")

        names = [tool.name for tool in (await client.list_tools()).tools]
        print(f"tools: {names}", flush=True)
        check(names == first, f"the list changed after a recovered call: {names}")
        await anyio.sleep(0.5)
        check(not changes, f"the server sent {changes} in the fixed layout")
        print("tool list unchanged, no notifications/tools/list_changed", flush=True)


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("stdio", "http"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    if sys.argv[1] == "stdio":
        target = StdioServerParameters(command=sys.argv[2], args=sys.argv[3:])
    else:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        url, token = sys.argv[2], sys.argv[3]
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
        target = streamable_http_client(url, http_client=http)
    try:
        asyncio.run(run(target))
    except Failed as failure:
        print(f"FAILED: {failure}", flush=True)
        sys.exit(1)
    print("ok", flush=True)


if __name__ == "__main__":
    main()
