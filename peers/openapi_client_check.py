"""Calls a running `axon serve` through a client generated from docs/openapi.json
by openapi-python-client (the package `axon_client`, on PYTHONPATH): one tool
call, then a two-step plan run to the end. Prints both results as JSON for the
Rust test (crates/axon-cli/tests/serve.rs) to check."""

import json
import sys

from axon_client import Client
from axon_client.api.default import call_tool, start_run
from axon_client.models import CallBody, CallBodyArgs, CallResult, Plan, PlanResult

client = Client(base_url=sys.argv[1], raise_on_unexpected_status=True)

called = call_tool.sync(
    "echo", client=client, body=CallBody(args=CallBodyArgs.from_dict({"hello": "world"}))
)
assert isinstance(called, CallResult), called

plan = Plan.from_dict(
    {
        "name": "generated-client",
        "steps": [
            {"id": "a", "tool": "echo", "params": {"n": 1}},
            {"tool": "echo", "params": {"m": "${steps.a.data.n}"}},
        ],
    }
)
ran = start_run.sync(client=client, body=plan, wait=True)
assert isinstance(ran, PlanResult), ran

print(json.dumps({"call": called.to_dict(), "run": ran.to_dict()}))
