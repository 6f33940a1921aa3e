"""JSON text from json's C encoder, made once.

`json.dumps` and `JSONEncoder.encode` make a new C encoder at every call, which is half
the time of encoding one small object; the exporters encode millions of them.
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable


def encoder(
    *, sort_keys: bool = False, default: Callable[[object], object] | None = None
) -> Callable[[object], str]:
    """What `json.JSONEncoder(ensure_ascii=False, sort_keys=…, default=…).encode` returns,
    on one line, with no check for circular references."""
    c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
    if c_make_encoder is None:  # an interpreter without json's C speedups
        return json.JSONEncoder(
            ensure_ascii=False, check_circular=False, sort_keys=sort_keys, default=default
        ).encode
    chunks = c_make_encoder(
        None, default, json.encoder.encode_basestring, None, ": ", ", ", sort_keys, False, True
    )
    return lambda value: "".join(chunks(value, 0))
