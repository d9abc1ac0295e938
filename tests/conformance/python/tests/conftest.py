"""Shared fixtures: one Scenario per test module, on the module's event loop."""

from __future__ import annotations

from types import SimpleNamespace

import pytest_asyncio

from harness.scenario import Scenario


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def story(request):
    """The module's scenario (fixture file named by the module's ``FIXTURE``, placeholders
    filled from its optional ``FIXTURE_VARS``: a dict, or a function returning one, called
    only when the module runs) and a mutable namespace its tests share, in file order
    (session id, what was streamed...)."""
    variables = getattr(request.module, "FIXTURE_VARS", None)
    if callable(variables):
        variables = variables()
    scenario = await Scenario.start(request.module.FIXTURE, variables)
    try:
        yield SimpleNamespace(scenario=scenario, fixture=scenario.fixture)
    finally:
        await scenario.cleanup()
