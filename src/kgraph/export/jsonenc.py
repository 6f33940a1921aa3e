"""JSON text from json's C encoder, made once.

`json.dumps` and `JSONEncoder.encode` make a new C encoder at every call, which costs about
3 µs: twice the time of encoding one small object, and the exporters encode millions of
them. `json.encoder.c_make_encoder` is not part of json's documented API, so it is used
only when it takes the arguments it takes in CPython 3.11–3.13 and gives the same text as
the public encoder on a probe; otherwise (another interpreter, a later release that
changed it) the public `JSONEncoder.encode` is used, and the bytes are the same.
tests/test_jsonenc.py fails loudly when CPython no longer gets the fast path, and checks
that both give the same text on random values.
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable

Encode = Callable[[object], str]
_PROBE = {"b": [1, 2.5, -0.0, float("inf"), None, True], "a": 'é\n"\\ \u2028 😀', "": {}}


def encoder(
    *, sort_keys: bool = False, default: Callable[[object], object] | None = None
) -> Encode:
    """What `json.JSONEncoder(ensure_ascii=False, sort_keys=…, default=…).encode` returns,
    on one line, with no check for circular references."""
    public = json.JSONEncoder(
        ensure_ascii=False, check_circular=False, sort_keys=sort_keys, default=default
    ).encode
    return _c_encoder(sort_keys, default, public) or public


def c_encoder_in_use() -> bool:
    """Whether `encoder` gets json's C encoder here (it does on CPython 3.11–3.13)."""
    public = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode
    return _c_encoder(False, None, public) is not None


def _c_encoder(
    sort_keys: bool, default: Callable[[object], object] | None, public: Encode
) -> Encode | None:
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # an interpreter without json's C speedups
        return None
    try:
        chunks = make(
            None, default, json.encoder.encode_basestring, None, ": ", ", ", sort_keys, False, True
        )

        def fast(value: object) -> str:
            return "".join(chunks(value, 0))

        if fast(_PROBE) != public(_PROBE):
            return None
    except (TypeError, ValueError):  # its arguments changed
        return None
    return fast
