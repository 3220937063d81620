"""wire.messages: the length-delimited payloads of one field of a serialized message."""

import pytest

from modelplane.xfn import memo, wire


def _varint_field(number: int, value: int) -> bytes:
    return wire.varint(number << 3) + wire.varint(value)


def test_messages_gives_each_payload_of_the_field_in_order_and_skips_the_rest() -> None:
    data = (
        wire.embedded(1, b"first")
        + wire.embedded(2, b"other")
        + _varint_field(3, 7)
        + wire.embedded(1, b"second")
    )
    found = [bytes(payload) for payload in wire.messages(memoryview(data), 1, "a thing")]
    assert found == [b"first", b"second"]


def test_messages_refuses_the_field_in_another_wire_type_naming_it() -> None:
    data = wire.embedded(1, b"first") + _varint_field(1, 7)
    with pytest.raises(ValueError, match=r"^a thing of wire type 0$"):
        list(wire.messages(memoryview(data), 1, "a thing"))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (_varint_field(wire.ITEMS, 1), "an item of wire type 0"),
        (wire.embedded(wire.ITEMS, _varint_field(wire.RESOURCE, 1)), "a resource of wire type 0"),
    ],
)
def test_digest_items_refuses_bytes_protobuf_might_read_otherwise(
    data: bytes, message: str
) -> None:
    with pytest.raises(ValueError, match=f"^{message}$"):
        memo.digest_items(data)
