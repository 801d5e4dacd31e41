"""Answers the requests of hpd-agent's MCP server with the official Python SDK's client.

Usage:
    python python_asking_client.py URL TOKEN EXPECTED_PROTOCOL

The server must serve the functions of ``hpd-agent-tests/tests/mcp_asking_python.rs``:
``ask_model`` (asks the client's model), ``ask_user`` (asks the user's name, then a colour) and
``ask_roots`` (asks for the roots), and the prompt ``greeting`` (asks the user's name). The client answers sampling with "Rome" from the model
"python-model", forms with "Grace" and "blue", and roots with ``file:///py/root``; it checks
the negotiated protocol version and each function's result. It prints one line per step and
exits with status 1 and a message at the first check that fails.
"""

import asyncio
import sys

import httpx2
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client


class Failed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failed(message)


def text_of(result):
    return "\n".join(getattr(block, "text", "") for block in result.content)


asked = []


async def sampling(context, params):
    prompt = params.messages[0].content.text
    asked.append(f"sampling: {prompt} (max {params.max_tokens}, system {params.system_prompt!r})")
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="Rome"),
        model="python-model",
        stop_reason="endTurn",
    )


async def elicitation(context, params):
    asked.append(f"elicitation: {params.message}")
    answers = {"Your name?": {"name": "Grace"}, "Your colour?": {"colour": "blue"}}
    return types.ElicitResult(action="accept", content=answers.get(params.message, {}))


async def roots(context):
    asked.append("roots")
    return types.ListRootsResult(roots=[types.Root(uri="file:///py/root", name="py")])


async def run(url, token, protocol):
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    target = streamable_http_client(url, http_client=http)
    async with Client(
        target,
        sampling_callback=sampling,
        elicitation_callback=elicitation,
        list_roots_callback=roots,
    ) as client:
        print(f"connected: protocol {client.protocol_version}", flush=True)
        check(client.protocol_version == protocol, f"expected protocol {protocol}")

        model = await client.call_tool("ask_model", {})
        print(f"ask_model -> {text_of(model)!r}", flush=True)
        check(text_of(model) == "the model said Rome (python-model)", "ask_model")

        user = await client.call_tool("ask_user", {})
        print(f"ask_user -> {text_of(user)!r}", flush=True)
        check(text_of(user) == '"Grace" likes "blue"', "ask_user")

        listed = await client.call_tool("ask_roots", {})
        print(f"ask_roots -> {text_of(listed)!r}", flush=True)
        check(text_of(listed) == "file:///py/root (py)", "ask_roots")

        prompt = await client.get_prompt("greeting", {})
        greeting = prompt.messages[0].content.text
        print(f"greeting -> {greeting!r}", flush=True)
        check(greeting == 'Greet "Grace".', "greeting")

        for line in asked:
            print(f"asked {line}", flush=True)
        check(
            asked[0] == "sampling: Name a capital (max 20, system 'One word.')",
            f"the sampling request was {asked[0]!r}",
        )


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    try:
        asyncio.run(run(sys.argv[1], sys.argv[2], sys.argv[3]))
    except Failed as failure:
        print(f"FAILED: {failure}", flush=True)
        sys.exit(1)
    print("ok", flush=True)


if __name__ == "__main__":
    main()
