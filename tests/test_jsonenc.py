"""kgraph.export.jsonenc: json's C encoder made once gives the public encoder's text.

The fast path uses `json.encoder.c_make_encoder`, which json does not document. These tests
fail loudly when a Python release changes it: the exports would still be right (the public
encoder takes over), but slower, and someone should look.
"""

from __future__ import annotations

import json
import platform

from hypothesis import given, settings
from hypothesis import strategies as st

from kgraph.export import jsonenc

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=30,
)


def test_jsonenc_cpython_gets_the_c_encoder() -> None:
    if platform.python_implementation() == "CPython":
        assert jsonenc.c_encoder_in_use(), "json.encoder.c_make_encoder changed: see jsonenc.py"


@settings(max_examples=150, deadline=None)
@given(value=values, sort_keys=st.booleans())
def test_jsonenc_gives_the_public_encoders_text(value: object, sort_keys: bool) -> None:
    expected = json.dumps(value, ensure_ascii=False, check_circular=False, sort_keys=sort_keys)
    assert jsonenc.encoder(sort_keys=sort_keys)(value) == expected


def test_jsonenc_default_is_called_for_other_types() -> None:
    encode = jsonenc.encoder(default=lambda o: {"set": sorted(o)})
    assert encode({"x": {3, 1}}) == '{"x": {"set": [1, 3]}}'
