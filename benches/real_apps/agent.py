"""One scripted agent for both servers: it reads what the tools answer, picks
elements by role and name from the text it has read, and turns each intent of
tasks.py into tool calls — the fewest a model reading the same text would make.

What it knows of the page (its view) is what the last answers said:
- Axon: `browser_snapshot`'s text, and each action's `changes` (a new page
  replaces the view, changed lines are added to it, removed ones are named).
- Playwright MCP 0.0.83: each action writes the page's whole snapshot to a
  file and links it (`### Snapshot`); the agent reads the linked file without
  a call (a generous reading: a model over MCP alone could not, and one with
  a file tool would spend a turn), counting its bytes as read.

When an element it needs is not in its view, it asks for a snapshot (a call);
when the snapshot does not have it yet (an app still drawing), it waits for
the element's name to show (a call) and looks again. Custom drop-downs and
sliders go through the tools each server has for them (a date on a calendar
is picked as a person does: "Next month" until the month shows, then the day); Axon's
`browser_select_option` and `browser_type` take any widget; with Playwright
MCP a custom drop-down is opened and its option clicked, and a slider is
focused and moved one arrow key at a time (its `browser_select_option` takes
only a <select>, and it has no tool that sets a slider).
"""

import asyncio
import json
import os
import pathlib
import sys
import re
import time


MONTHS = ["January", "February", "March", "April", "May", "June", "July",
          "August", "September", "October", "November", "December"]


def text_of(result) -> str:
    return "".join(b.text for b in result.content if b.type == "text")


class Failed(Exception):
    """A step the agent could not take; the task counts as failed."""


class Agent:
    def __init__(self, client, axon: bool, base: str):
        self.client = client
        self.axon = axon
        self.base = base
        self.calls = 0
        self.read = 0
        self.view: list[str] = []
        self.last = ""

    async def call(self, tool: str, args: dict) -> str:
        self.calls += 1
        began = time.perf_counter()
        r = await asyncio.wait_for(self.client.call_tool(tool, args), 60)
        ms = (time.perf_counter() - began) * 1000
        text = text_of(r)
        self.read += len(text)
        self.last = text
        trace = os.environ.get("REAL_APPS_TRACE")
        if trace:
            shown = text if trace == "full" else repr(text[:300])
            print(f"    {tool} {json.dumps(args)[:100]} -> {len(text)} B, {ms:.0f} ms:\n{shown}", file=sys.stderr)
        if r.is_error:
            raise Failed(f"{tool} {json.dumps(args)[:80]}: {text[:200]}")
        self.absorb(tool, text)
        return text

    def absorb(self, tool: str, text: str) -> None:
        if self.axon:
            # The text under `### Page`: "(new)" or no note is the whole page,
            # "(changes since your last snapshot)" what changed, "(no change)".
            page = re.search(r"^### Page(?: \(([^)]*)\))?$", text, re.M)
            if tool == "browser_snapshot" or (page and page.group(1) in (None, "new")):
                self.view = [text]
            elif page and page.group(1).startswith("changes"):
                # What is gone is not on the page: its lines are not looked in.
                self.view.append(re.sub(r"^- removed: .*\n?", "", text, flags=re.M))
            return
        link = re.search(r"### Snapshot\n- \[Snapshot\]\(([^)]+)\)", text)
        if link:
            snap = pathlib.Path(link.group(1)).read_text()
            self.read += len(snap)
            self.view = [snap]
        elif "### Snapshot" in text:
            self.view = [text]

    def find(self, role: str, name: str | None) -> str | None:
        """The ref of the element the latest text shows with this role and name
        (`None`: the first of that role, named or not). Names are compared as a
        model reads them: case aside (Chromium's accessibility tree, which Axon
        reads, names a `text-transform: uppercase` button "BOOK"), a trailing
        colon aside."""
        named = r'(?: "[^"\n]*")?' if name is None else rf' "(?i:{re.escape(name)}):?"'
        pattern = re.compile(rf"\b{role}{named}(?: [^\n]*?)? \[ref=(\w+)\]")
        # The first of a role is the first the page shows: the earliest text
        # that has one (later texts add what is new, further down).
        for chunk in self.view if name is None else reversed(self.view):
            found = pattern.findall(chunk)
            if found:
                return found[0] if name is None else found[-1]
        return None

    async def ref(self, role: str, name: str) -> str:
        ref = self.find(role, name)
        if ref:
            return ref
        await self.call("browser_snapshot", {})
        ref = self.find(role, name)
        if ref:
            return ref
        if name:
            await self.wait_for(name)
        else:
            await asyncio.sleep(1)
        await self.call("browser_snapshot", {})
        ref = self.find(role, name)
        if not ref:
            raise Failed(f"no {role} \"{name}\" on the page: {self.view[-1][-1500:] if self.view else None}")
        return ref

    async def wait_for(self, text: str) -> None:
        if self.axon:
            await self.call("browser_wait", {"text": text, "seconds": 5})
        else:
            await self.call("browser_wait_for", {"text": text})

    def target(self, ref: str, name: str | None) -> dict:
        return {"ref": ref} if self.axon else {"element": name or "it", "target": ref}

    async def act(self, tool: str, role: str, name: str, extra: dict) -> None:
        """An action on an element; a ref gone stale is looked up again once."""
        ref = await self.ref(role, name)
        try:
            await self.call(tool, {**self.target(ref, name), **extra})
        except Failed:
            self.view = []
            ref = await self.ref(role, name)
            await self.call(tool, {**self.target(ref, name), **extra})

    async def do(self, intent: tuple) -> None:
        kind, *rest = intent
        if kind == "go":
            self.view = []
            await self.call("browser_navigate", {"url": self.base + rest[0]})
        elif kind == "click":
            await self.act("browser_click", rest[0], rest[1], {})
        elif kind == "type":
            role, name, text, *submit = rest
            extra = {"text": text, "submit": True} if submit else {"text": text}
            if self.axon:
                # Playwright MCP's browser_type replaces what the field holds;
                # Axon's types after it unless told to clear it first.
                extra["clear"] = True
            await self.act("browser_type", role, name, extra)
        elif kind == "select":
            await self.select(*rest)
        elif kind == "slide":
            await self.slide(*rest)
        elif kind == "pick":
            await self.pick(*rest)
        elif kind == "expect":
            await self.expect(rest[0])
        else:
            raise ValueError(kind)

    async def select(self, role: str, name: str, option: str, native: bool, _label: str = "") -> None:
        if self.axon or native:
            await self.act("browser_select_option", role, name, {"values": [option]})
            return
        await self.act("browser_click", role, name, {})
        await self.act("browser_click", "option", option, {})

    async def slide(self, name: str | None, value: int, readout: str) -> None:
        if self.axon:
            await self.act("browser_type", "slider", name, {"text": str(value)})
            return
        # Playwright MCP: a click takes the focus (and moves the slider to
        # where it lands); the page's readout says where; then arrow keys.
        await self.act("browser_click", "slider", name, {})
        shown = re.search(rf"{re.escape(readout)}(\d+)", self.view[-1] if self.view else "")
        if not shown:
            raise Failed(f"the page does not show {readout!r} with a number")
        current = int(shown.group(1))
        key = "ArrowRight" if value > current else "ArrowLeft"
        for _ in range(abs(value - current)):
            await self.call("browser_press_key", {"key": key})

    def shown_month(self) -> tuple[int, int] | None:
        """The month and year a calendar shows, each from the latest text that
        names one (its header's buttons: a month's name, a year; a change
        names only what changed)."""
        def latest(pattern: str) -> str | None:
            for chunk in reversed(self.view):
                found = re.findall(pattern, chunk)
                if found:
                    return found[-1]
            return None
        month = latest(rf'button "({"|".join(MONTHS)})"')
        year = latest(r'button "(\d{4})"')
        return (int(year), MONTHS.index(month) + 1) if month and year else None

    async def pick(self, _calendar: str, iso: str) -> None:
        year, month, day = (int(p) for p in iso.split("-"))
        for _ in range(24):
            shown = self.shown_month()
            if shown is None:
                await self.call("browser_snapshot", {})
                shown = self.shown_month()
                if shown is None:
                    raise Failed("no calendar month on the page")
            if shown == (year, month):
                break
            later = (year, month) > shown
            await self.act("browser_click", "button", "Next month" if later else "Previous month", {})
        await self.act("browser_click", "button", str(day), {})

    async def expect(self, text: str) -> None:
        """Confirms what a person would look for, from what was read or by waiting."""
        if any(text.lower() in chunk.lower() for chunk in self.view):
            return
        await self.wait_for(text)

    async def confirm(self, how: str, text: str) -> None:
        """The task's last look: its outcome, from what was read or by one call."""
        if how == "shown":
            await self.expect(text)
            return
        latest = self.view[-1] if self.view else ""
        if self.axon:
            removed = re.findall(r"^- removed: (.*)$", self.last, re.M)
            if any(text.lower() in r.lower() for r in removed):
                return
            await self.call("browser_wait", {"text_gone": text, "seconds": 5})
        elif text.lower() not in latest.lower():
            return
        else:
            await self.call("browser_wait_for", {"textGone": text})


def step_of(intent: tuple) -> list[str]:
    """An intent as the plain-language steps a person gives `browser_act`,
    one action each (a typed text that is submitted is two: type, press)."""
    kind, *rest = intent
    if kind == "click":
        role, name = rest
        if name is None:
            return [f"Click the first {role}"]
        if role == "checkbox":
            return [f'Check "{name.split(" - ")[-1]}"' if " - " in name else f'Check the "{name}" checkbox']
        return [f'Click the "{name}" {role}']
    if kind == "type":
        role, name, text, *submit = rest
        field = "box" if role == "spinbutton" else "field"
        steps = [f'Type "{text}" into the "{name}" {field}']
        return steps + (["Press Enter"] if submit else [])
    if kind == "select":
        role, name, option, _native, *label = rest
        # A drop-down that shows its value as its name (Dash's) goes by the
        # label beside it.
        return [f'Select "{option}" in the "{label[0] if label else name}" drop-down']
    if kind == "slide":
        name, value, _readout = rest
        return [f"Set the slider to {value}" if name is None else f'Set the "{name}" slider to {value}']
    if kind == "pick":
        calendar, iso = rest
        return [f'Set the "{calendar}" date to {iso}']
    raise ValueError(kind)


class ActAgent(Agent):
    """The same tasks given to `browser_act` one plain step at a time, as an
    orchestrating model would: a navigation and a wait for a text are plain
    tools (an agent has both), every action on an element is a step in words."""

    async def do(self, intent: tuple) -> None:
        if intent[0] in ("go", "expect"):
            await super().do(intent)
            return
        for step in step_of(intent):
            await self.step(step)

    async def step(self, step: str) -> None:
        """One step; a refusal that says which button to click first (a
        calendar on another month) is followed, as a model would, and the
        step asked again."""
        for _ in range(24):
            try:
                self.view.append(await self.call("browser_act", {"plan_step": step}))
                return
            except Failed:
                first = re.search(r'click "([^"]+)" (once|(\d+) times), then', self.last)
                if not first:
                    raise
            for _ in range(1 if first.group(2) == "once" else int(first.group(3))):
                self.view.append(await self.call("browser_act", {"plan_step": f'Click the "{first.group(1)}" button'}))
        raise Failed(f"{step}: still refused")


async def body_text(client, axon: bool) -> str:
    """The page's visible text, read outside the count (the suite's referee)."""
    if axon:
        r = await client.call_tool("browser_get_text", {"selector": "body"})
    else:
        r = await client.call_tool("browser_evaluate", {"function": "() => document.body.innerText"})
    return text_of(r)


async def run_task(client, axon: bool, base: str, intents, outcome, act: bool = False) -> dict:
    # The browser starts before the task, outside the count: an agent's
    # session starts it once, not once per task.
    await client.call_tool("browser_navigate", {"url": "about:blank"})
    agent = (ActAgent if act else Agent)(client, axon, base)
    start = time.perf_counter()
    error = None
    try:
        for intent in intents:
            await agent.do(intent)
        await agent.confirm(*outcome)
    except (Failed, asyncio.TimeoutError) as e:
        error = str(e) or type(e).__name__
    ms = (time.perf_counter() - start) * 1000
    how, text = outcome
    try:
        await asyncio.sleep(0.2)
        shown = text.lower() in (await body_text(client, axon)).lower()
        done = error is None and shown == (how == "shown")
    except Exception as e:  # noqa: BLE001 - a referee that cannot read is a failure
        done, error = False, error or f"referee: {e}"
    if not done and error is None:
        error = f"the page does not show what it should ({how} {text!r})"
    # browser_act: a task not done without an honest refusal (ambiguous_step,
    # element_not_found) is a wrong action reported as success.
    refused = error is not None and re.search(r"\((ambiguous_step|element_not_found)\)", error) is not None
    wrong = act and not done and not refused
    return {"done": done, "calls": agent.calls, "ms": ms, "read": agent.read, "error": error, "wrong": wrong}
